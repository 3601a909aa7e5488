import { randomUUID } from 'node:crypto';
import {
  clampLimit,
  ConversationStreamStoreError,
  DEFAULT_READ_LIMIT,
  formatOffset,
  MAX_READ_LIMIT,
  parseOffset,
  parseSessionStorageKey,
  StreamListenerRegistry,
  type ConversationFoldCheckpoint,
  type ConversationProducerClaim,
  type ConversationRecord,
  type ConversationStreamIdentity,
  type ConversationStreamMeta,
  type ConversationStreamReadResult,
  type ConversationStreamStore,
} from '@flue/runtime/adapter';
import { z } from 'zod';
import type { RedisContext } from './keys.ts';
import { parseSubmissionRow, type SubmissionRow } from './submission-store.ts';
import type { Transaction } from './transactions.ts';

/** A stream's head as stored: batches in the list, their count and the producer fence here. */
/** A stream's head as stored; read back with this schema (another instance wrote it). */
const streamHead = z.object({
  identity: z.object({ agentName: z.string(), instanceId: z.string() }) satisfies z.ZodType<ConversationStreamIdentity>,
  incarnation: z.string(),
  /** How many batches the stream holds (the next batch's offset). */
  length: z.number(),
  producerId: z.string().nullable(),
  producerEpoch: z.number(),
  nextProducerSequence: z.number(),
  /** The stream length when the current producer took over: its sequence n sits at epochStart + n. */
  epochStart: z.number(),
});
type StreamHead = z.infer<typeof streamHead>;

/** One batch as stored: Flue's records as JSON text, and the submission that appended them. */
const storedBatch = z.object({ data: z.string(), submissionId: z.string().nullable(), attemptId: z.string().nullable() });
type StoredBatch = z.infer<typeof storedBatch>;
const parseBatch = (raw: string): StoredBatch => storedBatch.parse(JSON.parse(raw));
const parseHead = (raw: string): StreamHead => streamHead.parse(JSON.parse(raw));

type AppendInput = Parameters<ConversationStreamStore['append']>[0];

/** Larger batches mean an unbounded tool result, as in Flue's own stores. */
const MAX_BATCH_LENGTH = 12 * 1024 * 1024;

/**
 * Canonical conversation streams on Redis: a list of batches per stream and a head holding the
 * producer fence. One append is one transaction (one MULTI/EXEC, whatever the batch size),
 * fenced by the producer epoch and, for submission-owned records, by the attempt that owns the
 * submission, read in the same transaction.
 */
export class RedisConversationStreamStore implements ConversationStreamStore {
  readonly #db: RedisContext;
  readonly #listeners = new StreamListenerRegistry();

  constructor(db: RedisContext) {
    this.#db = db;
  }

  createStream(path: string, identity: ConversationStreamIdentity): Promise<void> {
    return this.#db.transactions.run(async (tx) => {
      const head = await this.#head(tx, path);
      if (head) {
        if (head.identity.agentName !== identity.agentName || head.identity.instanceId !== identity.instanceId) fail('create', path, 'Stream identity conflicts.');
        return;
      }
      this.#putHead(tx, path, {
        identity: { agentName: identity.agentName, instanceId: identity.instanceId },
        incarnation: `inc_${randomUUID()}`,
        length: 0,
        producerId: null,
        producerEpoch: 0,
        nextProducerSequence: 0,
        epochStart: 0,
      });
    });
  }

  acquireProducer(path: string, producerId: string): Promise<ConversationProducerClaim> {
    return this.#db.transactions.run(async (tx) => {
      const head = await this.#head(tx, path);
      if (!head) fail('acquire_producer', path, 'Stream does not exist.');
      const next = { ...head, producerId, producerEpoch: head.producerEpoch + 1, nextProducerSequence: 0, epochStart: head.length };
      this.#putHead(tx, path, next);
      return { producerId, producerEpoch: next.producerEpoch, incarnation: head.incarnation, nextProducerSequence: 0, offset: formatOffset(head.length - 1) };
    });
  }

  async append(input: AppendInput): Promise<{ offset: string }> {
    const { path } = input;
    if (input.records.length === 0) fail('append', path, 'A canonical batch cannot be empty.');
    const data = JSON.stringify(input.records);
    if (data.length > MAX_BATCH_LENGTH) fail('append', path, `The batch serializes to ${data.length} characters, above the 12MB per-append ceiling.`);
    const batch: StoredBatch = { data, submissionId: input.submission?.submissionId ?? null, attemptId: input.submission?.attemptId ?? null };
    return this.#db.transactions.run(async (tx) => {
      const head = await this.#head(tx, path);
      if (!head) fail('append', path, 'Stream does not exist.');
      if (head.producerId !== input.producerId || head.producerEpoch !== input.producerEpoch || head.incarnation !== input.incarnation) {
        fail('append', path, 'Producer ownership is stale.');
      }
      if (input.producerSequence < head.nextProducerSequence) {
        const index = head.epochStart + input.producerSequence;
        const raw = await this.#db.redis.lindex(this.#db.keys.batches(path), index);
        const stored = raw === null ? null : parseBatch(raw);
        if (!stored || stored.data !== batch.data || stored.submissionId !== batch.submissionId || stored.attemptId !== batch.attemptId) {
          fail('append', path, 'Producer sequence has conflicting content.');
        }
        return { offset: formatOffset(index) };
      }
      if (input.producerSequence !== head.nextProducerSequence) fail('append', path, 'Producer sequence is not the next expected value.');
      await this.#authorize(tx, path, head, input.submission, input.records);
      tx.push(this.#db.keys.batches(path), JSON.stringify(batch));
      this.#putHead(tx, path, { ...head, length: head.length + 1, nextProducerSequence: head.nextProducerSequence + 1 });
      tx.afterCommit(() => this.#listeners.notify(path));
      return { offset: formatOffset(head.length) };
    });
  }

  async read(path: string, options?: { offset?: string; limit?: number }): Promise<ConversationStreamReadResult> {
    const head = await this.#readHead(path);
    if (!head) return { batches: [], nextOffset: '-1', upToDate: true };
    const last = head.length - 1;
    const rawOffset = options?.offset ?? '-1';
    if (rawOffset === 'now') return { batches: [], nextOffset: formatOffset(last), upToDate: true };
    const after = parseOffset(rawOffset);
    if (!Number.isSafeInteger(after) || after > last) fail('read', path, 'Read offset is beyond the canonical stream head.');
    const limit = clampLimit(options?.limit, DEFAULT_READ_LIMIT, MAX_READ_LIMIT);
    const end = Math.min(after + limit, last);
    const raws = end > after ? await this.#db.redis.lrange(this.#db.keys.batches(path), after + 1, end) : [];
    const batches = raws.map((raw, i) => ({
      offset: formatOffset(after + 1 + i),
      records: JSON.parse(parseBatch(raw).data) as ConversationRecord[],
    }));
    return { batches, nextOffset: batches.at(-1)?.offset ?? formatOffset(after), upToDate: end >= last };
  }

  async getMeta(path: string): Promise<ConversationStreamMeta | null> {
    const head = await this.#readHead(path);
    if (!head) return null;
    return {
      identity: { ...head.identity },
      incarnation: head.incarnation,
      nextOffset: formatOffset(head.length - 1),
      producerId: head.producerId,
      producerEpoch: head.producerEpoch,
      nextProducerSequence: head.nextProducerSequence,
    };
  }

  subscribe(path: string, listener: () => void): () => void {
    return this.#listeners.subscribe(path, listener);
  }

  async putFoldCheckpoint(path: string, checkpoint: ConversationFoldCheckpoint): Promise<void> {
    await this.#db.redis.set(this.#db.keys.checkpoint(path), JSON.stringify(checkpoint));
  }

  async getFoldCheckpoint(path: string, options?: { atOrBefore?: string }): Promise<ConversationFoldCheckpoint | null> {
    const raw = await this.#db.redis.get(this.#db.keys.checkpoint(path));
    if (!raw) return null;
    const checkpoint = JSON.parse(raw) as ConversationFoldCheckpoint;
    if (options?.atOrBefore !== undefined && parseOffset(checkpoint.offset) > parseOffset(options.atOrBefore)) return null;
    return checkpoint;
  }

  async #head(tx: Transaction, path: string): Promise<StreamHead | undefined> {
    const raw = await tx.get(this.#db.keys.stream(path));
    return raw ? parseHead(raw) : undefined;
  }

  async #readHead(path: string): Promise<StreamHead | undefined> {
    const raw = await this.#db.redis.get(this.#db.keys.stream(path));
    return raw ? parseHead(raw) : undefined;
  }

  #putHead(tx: Transaction, path: string, head: StreamHead): void {
    tx.set(this.#db.keys.stream(path), JSON.stringify(head));
  }

  async #row(tx: Transaction, submissionId: string): Promise<SubmissionRow | undefined> {
    const raw = await tx.get(this.#db.keys.submission(submissionId));
    return raw ? parseSubmissionRow(raw) : undefined;
  }

  /**
   * Records that name a submission may only be written by the attempt that runs it (or by its
   * host, for a delivery joined to it), and only to that submission's own conversation.
   */
  async #authorize(
    tx: Transaction,
    path: string,
    head: StreamHead,
    submission: AppendInput['submission'],
    records: readonly ConversationRecord[],
  ): Promise<void> {
    const owned = records.filter((record) => record.submissionId !== undefined || record.attemptId !== undefined);
    if (!submission) {
      if (owned.length > 0) fail('append', path, 'Submission-owned records require an attempt authorization.');
      return;
    }
    for (const record of owned) {
      if (record.submissionId === submission.submissionId && record.attemptId === submission.attemptId) continue;
      if (record.attemptId === submission.attemptId && record.submissionId !== undefined) {
        const delivery = await this.#row(tx, record.submissionId);
        if ((delivery?.status === 'joining' || delivery?.status === 'joined') && delivery.joinedInto === submission.submissionId) continue;
      }
      fail('append', path, 'Record ownership does not match the authorized submission attempt.');
    }
    const row = await this.#row(tx, submission.submissionId);
    const settlement = owned[0];
    const terminalizingSettlement =
      row?.status === 'terminalizing' &&
      records.length === 1 &&
      owned.length === 1 &&
      settlement?.type === 'submission_settled' &&
      row.settlementRecordId === settlement.id &&
      row.settlementRecord === JSON.stringify(settlement);
    const lane = row ? parseSessionStorageKey(row.sessionKey) : undefined;
    if (
      !row ||
      (row.status !== 'running' && !terminalizingSettlement) ||
      row.attemptId !== submission.attemptId ||
      !lane ||
      lane.agentName !== head.identity.agentName ||
      lane.instanceId !== head.identity.instanceId
    ) {
      fail('append', path, 'Submission attempt no longer owns work for this agent instance.');
    }
  }
}

function fail(operation: string, path: string, reason: string): never {
  throw new ConversationStreamStoreError({ operation, path, reason });
}
