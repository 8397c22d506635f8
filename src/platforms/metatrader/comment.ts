/**
 * MetaApi stores `clientId` inside the MT order comment, so `comment` and `clientId` together may hold at
 * most 26 characters (fact sheet A6). The clientId is our correlation tag and must survive whole; a comment
 * is decoration and gets whatever room is left.
 */
export const MT_COMMENT_LIMIT = 26;

/** Alphanumerics plus `_` and `-`: MetaApi asks for alphanumeric ids, and `_` is its own separator. */
const TAG_PATTERN = /^[A-Za-z0-9_-]+$/;

export type CommentFit = { ok: true; clientId: string; comment?: string } | { ok: false; reason: string };

export function fitComment(tag: string, comment?: string): CommentFit {
  if (tag.length === 0) return { ok: false, reason: 'the correlation tag is empty' };
  if (!TAG_PATTERN.test(tag)) return { ok: false, reason: 'the correlation tag must be alphanumeric (plus _ and -)' };
  if (tag.length > MT_COMMENT_LIMIT)
    return { ok: false, reason: `clientId holds at most ${MT_COMMENT_LIMIT} characters, tag has ${tag.length}` };
  const room = MT_COMMENT_LIMIT - tag.length;
  const c = (comment ?? '').slice(0, room);
  return c ? { ok: true, clientId: tag, comment: c } : { ok: true, clientId: tag };
}
