import {
  AttachmentConflictError,
  attachmentBytesEqual,
  sameAttachmentRef,
  verifyAttachmentBytes,
  type AttachmentRef,
  type AttachmentStore,
  type GetAttachmentInput,
  type PutAttachmentInput,
  type StoredAttachment,
} from '@flue/runtime/adapter';
import type { RedisContext } from './keys.ts';

interface StoredRecord {
  attachment: AttachmentRef;
  conversationId: string;
  base64: string;
}

/** Immutable attachment bytes on Redis, one key per attachment; re-putting the same bytes is a no-op. */
export class RedisAttachmentStore implements AttachmentStore {
  readonly #db: RedisContext;

  constructor(db: RedisContext) {
    this.#db = db;
  }

  async put(input: PutAttachmentInput): Promise<void> {
    await verifyAttachmentBytes(input.attachment, input.bytes);
    const key = this.#db.keys.attachment(input.streamPath, input.attachment.id);
    await this.#db.transactions.run(async (tx) => {
      const raw = await tx.get(key);
      if (raw) {
        const existing = JSON.parse(raw) as StoredRecord;
        const same =
          sameAttachmentRef(existing.attachment, input.attachment) &&
          existing.conversationId === input.conversationId &&
          attachmentBytesEqual(Buffer.from(existing.base64, 'base64'), input.bytes);
        if (!same) throw new AttachmentConflictError({ path: input.streamPath, attachmentId: input.attachment.id });
        return;
      }
      const record: StoredRecord = { attachment: { ...input.attachment }, conversationId: input.conversationId, base64: Buffer.from(input.bytes).toString('base64') };
      tx.set(key, JSON.stringify(record));
    });
  }

  async get(input: GetAttachmentInput): Promise<StoredAttachment | null> {
    const raw = await this.#db.redis.get(this.#db.keys.attachment(input.streamPath, input.attachmentId));
    if (!raw) return null;
    const record = JSON.parse(raw) as StoredRecord;
    if (record.conversationId !== input.conversationId) return null;
    const bytes = Uint8Array.from(Buffer.from(record.base64, 'base64'));
    await verifyAttachmentBytes(record.attachment, bytes);
    return { attachment: { ...record.attachment }, bytes };
  }
}
