/**
 * One record per request the chaos receiver answered or gave up on, in completion order, kept in
 * growable typed arrays: a bench run writes millions, and an object per record would cost the
 * garbage collector CPU that the system under test is measured on. Route names are interned
 * (a run has a handful); message ids are kept as the header strings the parser already made.
 */

export type SignatureCheck = 'ok' | 'bad' | 'unsigned' | 'none';
/** Index = the code stored per record. */
const SIGNATURES: readonly SignatureCheck[] = ['ok', 'bad', 'unsigned', 'none'];
const SIGNATURE_CODE: Readonly<Record<SignatureCheck, number>> = { ok: 0, bad: 1, unsigned: 2, none: 3 };

export interface RequestRecord {
  /** Epoch ms (performance.timeOrigin + performance.now()) when the request body was fully read. */
  readonly arrivalMs: number;
  readonly route: string;
  /** X-Eventrelay-Message-Id, or '' without one. */
  readonly messageId: string;
  /** X-Eventrelay-Attempt, or 0 without a valid one. */
  readonly attempt: number;
  /** properties.sentAtMs from the body, NaN without one. */
  readonly sentAtMs: number;
  /** Status answered; 0 = hung, reset, or the client went away before the answer was fully written. */
  readonly status: number;
  readonly signature: SignatureCheck;
  readonly tls: boolean;
}

/** Records [from, from + length) as parallel arrays, JSON-safe (an absent sentAtMs is null, not NaN). */
export interface RecordSlice {
  readonly from: number;
  readonly arrivalMs: number[];
  readonly route: string[];
  readonly messageId: string[];
  readonly attempt: number[];
  readonly sentAtMs: (number | null)[];
  readonly status: number[];
  readonly signature: SignatureCheck[];
  readonly tls: boolean[];
}

const INITIAL = 1 << 14;

function grow<T extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(a: T, size: number, make: (n: number) => T): T {
  const bigger = make(size);
  bigger.set(a);
  return bigger;
}

export class RecordStore {
  private size = 0;
  private arrivalMs = new Float64Array(INITIAL);
  private sentAtMs = new Float64Array(INITIAL);
  private routeId = new Uint32Array(INITIAL);
  private attempt = new Uint32Array(INITIAL);
  private status = new Uint16Array(INITIAL);
  /** Signature code in the low 2 bits, TLS in bit 2. */
  private flags = new Uint8Array(INITIAL);
  private readonly messageId: string[] = [];
  private readonly routes: string[] = [];
  private readonly routeIds = new Map<string, number>();

  get length(): number {
    return this.size;
  }

  add(r: RequestRecord): void {
    if (this.size === this.arrivalMs.length) this.grow();
    const i = this.size++;
    let id = this.routeIds.get(r.route);
    if (id === undefined) {
      id = this.routes.length;
      this.routes.push(r.route);
      this.routeIds.set(r.route, id);
    }
    this.arrivalMs[i] = r.arrivalMs;
    this.sentAtMs[i] = r.sentAtMs;
    this.routeId[i] = id;
    this.attempt[i] = r.attempt;
    this.status[i] = r.status;
    this.flags[i] = SIGNATURE_CODE[r.signature] | (r.tls ? 4 : 0);
    this.messageId.push(r.messageId);
  }

  /** Records [from, from + max), clipped to what exists. */
  slice(from: number, max: number): RecordSlice {
    const start = Math.max(0, Math.min(Math.floor(from), this.size));
    const end = Math.min(this.size, start + Math.max(0, Math.floor(max)));
    const out: RecordSlice = {
      from: start,
      arrivalMs: [],
      route: [],
      messageId: [],
      attempt: [],
      sentAtMs: [],
      status: [],
      signature: [],
      tls: [],
    };
    for (let i = start; i < end; i++) {
      const sent = this.sentAtMs[i]!;
      const flags = this.flags[i]!;
      out.arrivalMs.push(this.arrivalMs[i]!);
      out.route.push(this.routes[this.routeId[i]!]!);
      out.messageId.push(this.messageId[i]!);
      out.attempt.push(this.attempt[i]!);
      out.sentAtMs.push(Number.isNaN(sent) ? null : sent);
      out.status.push(this.status[i]!);
      out.signature.push(SIGNATURES[flags & 3]!);
      out.tls.push((flags & 4) !== 0);
    }
    return out;
  }

  private grow(): void {
    const n = this.arrivalMs.length * 2;
    this.arrivalMs = grow(this.arrivalMs, n, (k) => new Float64Array(k));
    this.sentAtMs = grow(this.sentAtMs, n, (k) => new Float64Array(k));
    this.routeId = grow(this.routeId, n, (k) => new Uint32Array(k));
    this.attempt = grow(this.attempt, n, (k) => new Uint32Array(k));
    this.status = grow(this.status, n, (k) => new Uint16Array(k));
    this.flags = grow(this.flags, n, (k) => new Uint8Array(k));
  }
}
