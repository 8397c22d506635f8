import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface Mail {
  from: string;
  to: string[];
  subject: string;
  raw: string;
  /** The text part, quoted-printable decoded. */
  body: string;
}

const decodeQp = (text: string) =>
  Buffer.from(
    text
      .replace(/=\r?\n/g, '')
      .replace(/=([0-9A-F]{2})/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16))),
    'latin1',
  ).toString('utf8');

/**
 * A real SMTP server (the smtp-server package) on 127.0.0.1, on an ephemeral port: it asks for a login, keeps every
 * message, and refuses recipients listed in `refuse` (a failing channel).
 */
export class SmtpSink {
  readonly mails: Mail[] = [];
  readonly refuse = new Set<string>();
  logins: Array<{ user: string; pass: string }> = [];
  port = 0;
  private server: SMTPServer | null = null;

  constructor(
    private readonly user: string,
    private readonly pass: string,
  ) {}

  async up(): Promise<this> {
    this.server = new SMTPServer({
      // Plain SMTP on loopback: STARTTLS would need a certificate the client trusts; the login is checked all the same.
      disabledCommands: ['STARTTLS'],
      allowInsecureAuth: true,
      logger: false,
      onAuth: (auth, _session, cb) => {
        this.logins.push({ user: auth.username ?? '', pass: auth.password ?? '' });
        if (auth.username === this.user && auth.password === this.pass) cb(null, { user: auth.username });
        else cb(new Error('535 authentication failed'));
      },
      onRcptTo: (addr, _session, cb) => {
        if (this.refuse.has(addr.address)) {
          const err = new Error('mailbox unavailable') as Error & { responseCode: number };
          err.responseCode = 550;
          cb(err);
          return;
        }
        cb();
      },
      onData: (stream, session, cb) => {
        let raw = '';
        stream.setEncoding('utf8');
        stream.on('data', (c: string) => {
          raw += c;
        });
        stream.on('end', () => {
          const subject = /^Subject: (.*(?:\r?\n[ \t].*)*)/im.exec(raw)?.[1]?.replace(/\r?\n[ \t]/g, ' ') ?? '';
          this.mails.push({
            from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
            to: session.envelope.rcptTo.map((r) => r.address),
            subject,
            raw,
            body: decodeQp(raw.slice(raw.search(/\r?\n\r?\n/)).trim()),
          });
          cb();
        });
      },
    });
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(0, '127.0.0.1', () => resolve());
    });
    this.port = (this.server.server.address() as AddressInfo).port;
    return this;
  }

  to(address: string): Mail[] {
    return this.mails.filter((m) => m.to.includes(address));
  }

  async down(): Promise<void> {
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}

export interface TelegramCall {
  token: string;
  chatId: string;
  text: string;
}

/** A stub of the Bot API's sendMessage on 127.0.0.1: keeps each call; `fail` answers for a token with an error. */
export class TelegramStub {
  readonly calls: TelegramCall[] = [];
  readonly fail = new Map<string, { status: number; description: string; retryAfter?: number }>();
  port = 0;
  private server: Server | null = null;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async up(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => {
        body += c.toString('utf8');
      });
      req.on('end', () => {
        const m = /^\/bot([^/]+)\/sendMessage$/.exec(req.url ?? '');
        const answer = (status: number, json: unknown) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end(JSON.stringify(json));
        };
        if (req.method !== 'POST' || !m) return answer(404, { ok: false, error_code: 404, description: 'Not Found' });
        const token = decodeURIComponent(m[1]!);
        const f = this.fail.get(token);
        if (f)
          return answer(f.status, {
            ok: false,
            error_code: f.status,
            description: f.description,
            ...(f.retryAfter ? { parameters: { retry_after: f.retryAfter } } : {}),
          });
        const p = JSON.parse(body) as { chat_id: string; text: string };
        if (!p.chat_id) return answer(400, { ok: false, error_code: 400, description: 'Bad Request: chat not found' });
        this.calls.push({ token, chatId: String(p.chat_id), text: p.text });
        answer(200, { ok: true, result: { message_id: this.calls.length, chat: { id: p.chat_id }, text: p.text } });
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', () => resolve()));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  to(chatId: string): TelegramCall[] {
    return this.calls.filter((c) => c.chatId === chatId);
  }

  async down(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }
}
