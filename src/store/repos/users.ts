import { eq, sql } from 'drizzle-orm';
import type { Db } from '../db.js';
import { users } from '../schema.js';
import { newId } from '../../domain/ids.js';
import { AppError } from '../../domain/errors.js';

export interface UserRow { id: string; email: string; passwordHash: string; createdAt: Date }

export class UsersRepo {
  constructor(private readonly db: Db) {}

  async create(email: string, passwordHash: string): Promise<UserRow> {
    if (await this.byEmail(email)) throw new AppError('conflict', `a user with email ${email} already exists`);
    const [row] = await this.db.insert(users).values({ id: newId('usr'), email, passwordHash }).returning();
    return row!;
  }

  async byEmail(email: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(sql`lower(${users.email}) = lower(${email})`).limit(1);
    return row ?? null;
  }

  async byId(id: string): Promise<UserRow | null> {
    const [row] = await this.db.select().from(users).where(eq(users.id, id)).limit(1);
    return row ?? null;
  }

  async count(): Promise<number> {
    const [row] = await this.db.select({ n: sql<number>`count(*)::int` }).from(users);
    return row?.n ?? 0;
  }
}
