import {
  admitSubmissionWithBackend,
  createDispatchAgentSubmissionInput,
  DURABILITY_DEFAULT_MAX_ATTEMPTS,
  DURABILITY_DEFAULT_TIMEOUT_MS,
  hydratePersistedSubmissionAttachments,
  isSubmissionPayload,
  LEASE_DURATION_MS,
  type AgentDispatchAdmission,
  type AgentSubmission,
  type AgentSubmissionInput,
  type AgentSubmissionStore,
  type DispatchInput,
  type SubmissionAttemptRef,
  type SubmissionClaimRef,
  type SubmissionDurability,
  type SubmissionSettlementObligation,
} from '@flue/runtime/adapter';
import { z } from 'zod';
import type { RedisContext } from './keys.ts';
import type { Transaction } from './transactions.ts';

type Status = AgentSubmission['status'];
type SettledRecord = SubmissionSettlementObligation['record'];

const nullableNumber = z.number().nullable();
const nullableString = z.string().nullable();

/**
 * A submission as stored: the SQL adapters' row, one JSON string per submission. Read back with
 * this schema: another instance (or another version) may have written it.
 */
const submissionRow = z.object({
  sequence: z.number(),
  submissionId: z.string(),
  sessionKey: z.string(),
  kind: z.enum(['dispatch', 'direct']),
  payload: z.string(),
  status: z.enum(['queued', 'running', 'terminalizing', 'settled', 'joining', 'joined']) satisfies z.ZodType<Status>,
  acceptedAt: z.number(),
  canonicalReadyAt: nullableNumber,
  attemptId: nullableString,
  inputAppliedAt: nullableNumber,
  abortRequestedAt: nullableNumber,
  startedAt: nullableNumber,
  joinedInto: nullableString,
  error: nullableString,
  settledAt: nullableNumber,
  attemptCount: z.number(),
  maxAttempts: z.number(),
  timeoutAt: z.number(),
  ownerId: nullableString,
  leaseExpiresAt: z.number(),
  settlementRecordId: nullableString,
  settlementRecord: nullableString,
  chunks: z.array(z.object({ itemId: z.string(), index: z.number(), count: z.number(), data: z.string() })),
});
export type SubmissionRow = z.infer<typeof submissionRow>;

/** A stored submission row, checked; a row that does not match fails loudly rather than later. */
export function parseSubmissionRow(raw: string): SubmissionRow {
  return submissionRow.parse(JSON.parse(raw));
}

const UNSETTLED: ReadonlySet<Status> = new Set(['queued', 'running', 'terminalizing', 'joining', 'joined']);

/**
 * Flue's submission ledger on Redis. Each submission is one JSON row; the unsettled ones are
 * also indexed by lane (one conversation) and globally, by admission sequence. Every change is
 * an optimistic transaction over the rows it read, so concurrent claims cannot both win.
 */
export class RedisSubmissionStore implements AgentSubmissionStore {
  readonly #db: RedisContext;

  constructor(db: RedisContext) {
    this.#db = db;
  }

  async getSubmission(submissionId: string): Promise<AgentSubmission | null> {
    const raw = await this.#db.redis.get(this.#db.keys.submission(submissionId));
    return raw ? parseSubmission(parseSubmissionRow(raw)) : null;
  }

  async hasUnsettledSubmissions(): Promise<boolean> {
    return (await this.#db.redis.zcard(this.#db.keys.unsettled)) > 0;
  }

  async listRunnableSubmissions(): Promise<AgentSubmission[]> {
    const heads = new Map<string, SubmissionRow>();
    for (const row of await this.#unsettledRows()) if (!heads.has(row.sessionKey)) heads.set(row.sessionKey, row);
    return [...heads.values()].filter((row) => row.status === 'queued' && row.canonicalReadyAt !== null).map(parseSubmission);
  }

  async listUnreadySubmissions(): Promise<AgentSubmission[]> {
    return (await this.#unsettledRows()).filter((row) => row.status === 'queued' && row.canonicalReadyAt === null).map(parseSubmission);
  }

  async listRunningSubmissions(): Promise<AgentSubmission[]> {
    return (await this.#unsettledRows()).filter((row) => row.status === 'running').map(parseSubmission);
  }

  async listPendingSubmissionSettlements(): Promise<SubmissionSettlementObligation[]> {
    return (await this.#unsettledRows()).filter((row) => row.status === 'terminalizing').map(obligationOf);
  }

  async listExpiredSubmissions(): Promise<AgentSubmission[]> {
    const now = Date.now();
    return (await this.#unsettledRows())
      .filter((row) => row.status === 'running' && row.leaseExpiresAt > 0 && row.leaseExpiresAt < now)
      .map(parseSubmission);
  }

  async listJoinedSubmissions(hostSubmissionId: string): Promise<AgentSubmission[]> {
    const host = await this.getSubmission(hostSubmissionId);
    if (!host) return [];
    return this.#db.transactions.run(async (tx) =>
      (await this.#laneRows(tx, host.sessionKey))
        .filter((row) => row.joinedInto === hostSubmissionId && (row.status === 'joining' || row.status === 'joined'))
        .map(parseSubmission),
    );
  }

  replaceSubmissionAttempt(
    attempt: SubmissionAttemptRef,
    nextAttemptId: string,
    lease?: { ownerId: string; leaseExpiresAt: number },
  ): Promise<AgentSubmission | null> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, attempt.submissionId);
      if (!row || row.status !== 'running' || row.attemptId !== attempt.attemptId) return null;
      const next: SubmissionRow = {
        ...row,
        attemptId: nextAttemptId,
        startedAt: Date.now(),
        attemptCount: row.attemptCount + 1,
        ...(lease ? { ownerId: lease.ownerId, leaseExpiresAt: lease.leaseExpiresAt } : {}),
      };
      this.#put(tx, next);
      return parseSubmission(next);
    });
  }

  async admitDispatch(input: DispatchInput): Promise<AgentDispatchAdmission> {
    return this.#admit(createDispatchAgentSubmissionInput(input));
  }

  async admitDirect(input: AgentSubmissionInput): Promise<AgentSubmission> {
    const admission = await this.#admit(input);
    if (admission.kind !== 'submission') throw new Error('[flue-redis] A direct admission returned an unexpected result.');
    return admission.submission;
  }

  markSubmissionCanonicalReady(submissionId: string): Promise<AgentSubmission | null> {
    return this.#update(submissionId, (row) => (row.status === 'queued' ? { ...row, canonicalReadyAt: row.canonicalReadyAt ?? Date.now() } : undefined));
  }

  claimSubmission(claim: SubmissionClaimRef): Promise<AgentSubmission | null> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, claim.submissionId);
      if (!row || row.status !== 'queued' || row.canonicalReadyAt === null) return null;
      const [head] = await tx.members(this.#db.keys.lane(row.sessionKey));
      if (head !== row.submissionId) return null;
      const now = Date.now();
      const next: SubmissionRow = {
        ...row,
        status: 'running',
        attemptId: claim.attemptId,
        startedAt: now,
        attemptCount: row.attemptCount + 1,
        maxAttempts: DURABILITY_DEFAULT_MAX_ATTEMPTS,
        timeoutAt: row.timeoutAt === 0 ? now + DURABILITY_DEFAULT_TIMEOUT_MS : row.timeoutAt,
        ownerId: claim.ownerId,
        leaseExpiresAt: claim.leaseExpiresAt,
      };
      this.#put(tx, next);
      return parseSubmission(next);
    });
  }

  async markSubmissionInputApplied(attempt: SubmissionAttemptRef, durability?: SubmissionDurability): Promise<boolean> {
    const updated = await this.#updateOwned(attempt, (row) => {
      if (row.inputAppliedAt !== null) return row;
      const now = Date.now();
      return {
        ...row,
        inputAppliedAt: now,
        maxAttempts: durability?.maxAttempts ?? DURABILITY_DEFAULT_MAX_ATTEMPTS,
        timeoutAt: durability?.timeoutAt ?? now + DURABILITY_DEFAULT_TIMEOUT_MS,
      };
    });
    return updated;
  }

  requestSessionAbort(sessionKey: string): Promise<string[]> {
    return this.#db.transactions.run(async (tx) => {
      const now = Date.now();
      const aborted: string[] = [];
      for (const row of await this.#laneRows(tx, sessionKey)) {
        if (row.status === 'terminalizing') continue;
        if (row.abortRequestedAt === null) this.#put(tx, { ...row, abortRequestedAt: now });
        aborted.push(row.submissionId);
      }
      return aborted;
    });
  }

  requeueSubmission(attempt: SubmissionAttemptRef): Promise<boolean> {
    return this.#updateOwned(attempt, (row) => ({
      ...row,
      status: 'queued',
      attemptId: null,
      inputAppliedAt: null,
      startedAt: null,
      ownerId: null,
      leaseExpiresAt: 0,
    }));
  }

  async reserveSubmissionSettlement(
    attempt: SubmissionAttemptRef,
    settlement: { recordId: string; record: SettledRecord },
  ): Promise<SubmissionSettlementObligation | null> {
    if (settlement.record.id !== settlement.recordId) return null;
    const recordJson = JSON.stringify(settlement.record);
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, attempt.submissionId);
      if (!row) return null;
      if (row.settlementRecordId === null && (await this.#mayReserve(tx, row, attempt))) {
        const next: SubmissionRow = {
          ...row,
          status: 'terminalizing',
          settlementRecordId: settlement.recordId,
          settlementRecord: recordJson,
          attemptId: attempt.attemptId,
          startedAt: row.startedAt ?? Date.now(),
        };
        this.#put(tx, next);
        return obligationOf(next);
      }
      const exactRetry =
        row.status === 'terminalizing' &&
        row.attemptId === attempt.attemptId &&
        row.settlementRecordId === settlement.recordId &&
        row.settlementRecord === recordJson;
      return exactRetry ? obligationOf(row) : null;
    });
  }

  finalizeSubmissionSettlement(attempt: SubmissionAttemptRef, recordId: string, options?: { errorMessage?: string }): Promise<boolean> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, attempt.submissionId);
      if (!row || row.status !== 'terminalizing' || row.attemptId !== attempt.attemptId || row.settlementRecordId !== recordId) return false;
      const record = JSON.parse(row.settlementRecord!) as { outcome: string; error?: { message?: string } };
      const error = record.outcome === 'completed' ? null : (options?.errorMessage ?? record.error?.message ?? 'The submission did not complete.');
      await this.#settle(tx, row, error);
      return true;
    });
  }

  completeSubmission(attempt: SubmissionAttemptRef): Promise<boolean> {
    return this.#settleOwned(attempt, null);
  }

  failSubmission(attempt: SubmissionAttemptRef, error: unknown): Promise<boolean> {
    return this.#settleOwned(attempt, error instanceof Error ? error.message : String(error));
  }

  /** Settles a submission that never ran (aborted or unclaimable); only `queued` qualifies. */
  async settleQueuedSubmission(submissionId: string, _outcome: 'failed' | 'aborted', error: unknown): Promise<boolean> {
    const message = error instanceof Error ? error.message : String(error);
    const settled = await this.#update(submissionId, (row) =>
      row.status === 'queued' ? { ...row, status: 'settled', settledAt: Date.now(), error: message } : undefined,
    );
    return settled !== null;
  }

  claimJoinableSubmissions(host: SubmissionAttemptRef, agentName: string): Promise<AgentSubmission[]> {
    return this.#db.transactions.run(async (tx) => {
      const hostRow = await this.#row(tx, host.submissionId);
      if (!hostRow || hostRow.status !== 'running' || hostRow.attemptId !== host.attemptId) return [];
      const claimed: AgentSubmission[] = [];
      for (const row of await this.#laneRows(tx, hostRow.sessionKey)) {
        if (row.status !== 'queued') continue;
        if (row.canonicalReadyAt === null || row.abortRequestedAt !== null) break;
        let submission: AgentSubmission;
        try {
          submission = parseSubmission(row);
        } catch {
          break;
        }
        if (submission.input.agent !== agentName) break;
        this.#put(tx, { ...row, status: 'joining', joinedInto: host.submissionId });
        claimed.push({ ...submission, status: 'joining', joinedInto: host.submissionId });
      }
      return claimed;
    });
  }

  finalizeJoinedSubmission(host: SubmissionAttemptRef, submissionId: string): Promise<boolean> {
    return this.#updateJoining(host, submissionId, (row) => ({ ...row, status: 'joined', inputAppliedAt: row.inputAppliedAt ?? Date.now() }));
  }

  revertJoiningSubmission(host: SubmissionAttemptRef, submissionId: string): Promise<boolean> {
    return this.#updateJoining(host, submissionId, (row) => ({ ...row, status: 'queued', joinedInto: null, inputAppliedAt: null }));
  }

  renewLeases(ownerId: string, submissionIds: string[]): Promise<void> {
    if (submissionIds.length === 0) return Promise.resolve();
    return this.#db.transactions.run(async (tx) => {
      const leaseExpiresAt = Date.now() + LEASE_DURATION_MS;
      for (const id of submissionIds) {
        const row = await this.#row(tx, id);
        if (row?.status === 'running' && row.ownerId === ownerId) this.#put(tx, { ...row, leaseExpiresAt });
      }
    });
  }

  /** Reads a row inside a transaction (watching it). */
  async #row(tx: Transaction, submissionId: string): Promise<SubmissionRow | undefined> {
    const raw = await tx.get(this.#db.keys.submission(submissionId));
    return raw ? parseSubmissionRow(raw) : undefined;
  }

  /** The unsettled rows of one lane, in admission order (watching the lane and each row). */
  async #laneRows(tx: Transaction, sessionKey: string): Promise<SubmissionRow[]> {
    const rows: SubmissionRow[] = [];
    for (const id of await tx.members(this.#db.keys.lane(sessionKey))) {
      const row = await this.#row(tx, id);
      if (row) rows.push(row);
    }
    return rows;
  }

  /** Every unsettled row, in admission order: the coordinator's scans. */
  async #unsettledRows(): Promise<SubmissionRow[]> {
    const ids = await this.#db.redis.zrange(this.#db.keys.unsettled, '0', '-1');
    if (ids.length === 0) return [];
    const raws = await this.#db.redis.mget(ids.map((id) => this.#db.keys.submission(id)));
    return raws.flatMap((raw) => {
      if (!raw) return [];
      const row = parseSubmissionRow(raw);
      return UNSETTLED.has(row.status) ? [row] : [];
    });
  }

  /** Writes a row and keeps the unsettled indexes in step with its status. */
  #put(tx: Transaction, row: SubmissionRow): void {
    tx.set(this.#db.keys.submission(row.submissionId), JSON.stringify(row));
    if (UNSETTLED.has(row.status)) {
      tx.add(this.#db.keys.lane(row.sessionKey), row.sequence, row.submissionId);
      tx.add(this.#db.keys.unsettled, row.sequence, row.submissionId);
    } else {
      tx.remove(this.#db.keys.lane(row.sessionKey), row.submissionId);
      tx.remove(this.#db.keys.unsettled, row.submissionId);
    }
  }

  #update(submissionId: string, change: (row: SubmissionRow) => SubmissionRow | undefined): Promise<AgentSubmission | null> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, submissionId);
      const next = row && change(row);
      if (!next) return null;
      this.#put(tx, next);
      return parseSubmission(next);
    });
  }

  /** Changes a row only while `attempt` runs it. */
  async #updateOwned(attempt: SubmissionAttemptRef, change: (row: SubmissionRow) => SubmissionRow): Promise<boolean> {
    const updated = await this.#update(attempt.submissionId, (row) =>
      row.status === 'running' && row.attemptId === attempt.attemptId ? change(row) : undefined,
    );
    return updated !== null;
  }

  #settleOwned(attempt: SubmissionAttemptRef, error: string | null): Promise<boolean> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, attempt.submissionId);
      if (!row || row.status !== 'running' || row.attemptId !== attempt.attemptId) return false;
      await this.#settle(tx, row, error);
      return true;
    });
  }

  /** Settles a host and, with it, what joined it; unconfirmed joins go back to the queue. */
  async #settle(tx: Transaction, host: SubmissionRow, error: string | null): Promise<void> {
    const settledAt = Date.now();
    this.#put(tx, { ...host, status: 'settled', settledAt, error });
    for (const row of await this.#laneRows(tx, host.sessionKey)) {
      if (row.joinedInto !== host.submissionId) continue;
      if (row.status === 'joined') this.#put(tx, { ...row, status: 'settled', settledAt, error });
      else if (row.status === 'joining') this.#put(tx, { ...row, status: 'queued', joinedInto: null, inputAppliedAt: null });
    }
  }

  async #mayReserve(tx: Transaction, row: SubmissionRow, attempt: SubmissionAttemptRef): Promise<boolean> {
    if (row.status === 'running') return row.attemptId === attempt.attemptId && row.ownerId !== null;
    if (row.status !== 'joined' || row.joinedInto === null) return false;
    const host = await this.#row(tx, row.joinedInto);
    return host?.status === 'running' && host.attemptId === attempt.attemptId;
  }

  #updateJoining(host: SubmissionAttemptRef, submissionId: string, change: (row: SubmissionRow) => SubmissionRow): Promise<boolean> {
    return this.#db.transactions.run(async (tx) => {
      const row = await this.#row(tx, submissionId);
      if (!row || row.status !== 'joining' || row.joinedInto !== host.submissionId) return false;
      const hostRow = await this.#row(tx, host.submissionId);
      if (!hostRow || hostRow.status !== 'running' || hostRow.attemptId !== host.attemptId) return false;
      this.#put(tx, change(row));
      return true;
    });
  }

  async #admit(input: AgentSubmissionInput): Promise<AgentDispatchAdmission> {
    // Allocated before the transaction: a retried or replayed admission only leaves a gap.
    const sequence = await this.#db.redis.incr(this.#db.keys.sequence);
    return this.#db.transactions.run((tx) =>
      Promise.resolve(
        admitSubmissionWithBackend<SubmissionRow>(input, {
          insertIfAbsent: async (insert) => {
            if (await this.#row(tx, insert.submissionId)) return;
            this.#put(tx, {
              ...insert,
              sequence,
              status: 'queued',
              canonicalReadyAt: null,
              attemptId: null,
              inputAppliedAt: null,
              abortRequestedAt: null,
              startedAt: null,
              joinedInto: null,
              error: null,
              settledAt: null,
              attemptCount: 0,
              maxAttempts: DURABILITY_DEFAULT_MAX_ATTEMPTS,
              timeoutAt: 0,
              ownerId: null,
              leaseExpiresAt: 0,
              settlementRecordId: null,
              settlementRecord: null,
              chunks: [],
            });
          },
          getExisting: (submissionId) => this.#row(tx, submissionId),
          readChunks: async (submissionId) => (await this.#row(tx, submissionId))?.chunks ?? [],
          replaceChunks: async (submissionId, chunks) => {
            const row = await this.#row(tx, submissionId);
            if (row) this.#put(tx, { ...row, chunks: [...chunks] });
          },
          parseSubmission: (row, chunks) => parseSubmission({ ...row, chunks: [...chunks] }),
        }),
      ),
    );
  }
}

function obligationOf(row: SubmissionRow): SubmissionSettlementObligation {
  return {
    submissionId: row.submissionId,
    sessionKey: row.sessionKey,
    attemptId: row.attemptId!,
    recordId: row.settlementRecordId!,
    record: JSON.parse(row.settlementRecord!) as SettledRecord,
  };
}

function parseSubmission(row: SubmissionRow): AgentSubmission {
  const input = hydratePersistedSubmissionAttachments(JSON.parse(row.payload) as AgentSubmissionInput, row.chunks);
  const context = { kind: row.kind, submissionId: row.submissionId, sessionKey: row.sessionKey, acceptedAt: row.acceptedAt };
  if (!isSubmissionPayload(input, context)) throw new Error('[flue-redis] A stored submission payload is malformed.');
  return {
    sequence: row.sequence,
    submissionId: row.submissionId,
    sessionKey: row.sessionKey,
    kind: row.kind,
    input,
    status: row.status,
    acceptedAt: row.acceptedAt,
    canonicalReadyAt: row.canonicalReadyAt,
    ...(row.attemptId !== null ? { attemptId: row.attemptId } : {}),
    ...(row.inputAppliedAt !== null ? { inputAppliedAt: row.inputAppliedAt } : {}),
    ...(row.abortRequestedAt !== null ? { abortRequestedAt: row.abortRequestedAt } : {}),
    ...(row.startedAt !== null ? { startedAt: row.startedAt } : {}),
    ...(row.joinedInto !== null ? { joinedInto: row.joinedInto } : {}),
    ...(row.error !== null ? { error: row.error } : {}),
    ...(row.settledAt !== null ? { settledAt: row.settledAt } : {}),
    attemptCount: row.attemptCount,
    maxAttempts: row.maxAttempts,
    timeoutAt: row.timeoutAt,
    ...(row.ownerId !== null ? { ownerId: row.ownerId } : {}),
    leaseExpiresAt: row.leaseExpiresAt,
  };
}
