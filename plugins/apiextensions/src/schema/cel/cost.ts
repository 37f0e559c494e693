// What CEL work may cost, in upstream's units (about one unit per evaluated identifier, field selection or
// function call, and 0.1 per character a string function walks): the limits a CRD's rules are held to
// when the CRD is written (estimated) and when a custom resource is validated (counted as it runs), and the
// meter that counts. Every request runs on the one event loop, so a rule must stop when its budget is spent.

/** Largest estimated cost of one rule (times how often its node can occur) or messageExpression. */
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
/** Largest estimated cost of all the rules of one version's schema together. */
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
/** Largest cost one evaluation of one expression may reach before it is cancelled. */
export const PER_CALL_LIMIT = 1_000_000;
/** Cost all the rules may spend validating one object. */
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
/** The request size limit: the longest string, longest list and largest map a custom resource can carry. */
export const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

/** Cost per character of walking a string (or byte of bytes). */
export const STRING_TRAVERSAL_COST_FACTOR = 0.1;
/** Cost per character of a regular expression, per traversal cost of the matched string. */
export const REGEX_STRING_LENGTH_COST_FACTOR = 0.25;
/**
 * Cost per character of compiling a regular expression no rule has used yet (@bufbuild/re2 takes a few
 * microseconds a character, longer literal runs more); compiled patterns are cached.
 */
export const REGEX_COMPILE_COST_PER_CHARACTER = 100;
/** The longest pattern `matches` compiles (@bufbuild/re2 compiles long literal runs in quadratic time). */
export const MAX_REGEX_LENGTH = 4096;
/** Cost of building a list, map or message literal. */
export const LIST_CREATE_COST = 10;
export const MAP_CREATE_COST = 30;
export const MESSAGE_CREATE_COST = 40;

/** cel-go's wording when an evaluation passes its cost limit; validation reports it as upstream does. */
export const COST_LIMIT_EXCEEDED = 'operation cancelled: actual cost limit exceeded';

/** The cost of walking `length` characters. */
export const traversal = (length: number): number => Math.ceil(length * STRING_TRAVERSAL_COST_FACTOR);

/** Thrown by library functions that find the meter spent in the middle of their work. */
export class CostLimitExceeded extends Error {
  constructor() {
    super(COST_LIMIT_EXCEEDED);
  }
}

/**
 * Counts the cost of one validation against its budget, and of each expression evaluation against the
 * per-call limit. Once either is passed, every further charge fails, so loops and calls stop at once.
 */
export class CostMeter {
  /** Cost spent so far in this validation. */
  spent = 0;
  /** Set once a charge passed a limit: which one. */
  exceeded: 'call' | 'budget' | undefined;
  private limit: number;
  /** Code point counts of long strings this validation has measured (`size()` is charged as one unit). */
  readonly sizes = new Map<string, number>();

  constructor(
    readonly budget: number,
    readonly perCall = PER_CALL_LIMIT,
  ) {
    this.limit = Math.min(budget, perCall);
  }

  /** Starts one expression evaluation: its cost may reach `perCall` more, within the budget. */
  beginCall(): void {
    this.limit = Math.min(this.budget, this.spent + this.perCall);
  }

  /** Adds `units`; false (and `exceeded` set) once a limit is passed. */
  charge(units: number): boolean {
    if (this.exceeded) return false;
    this.spent += units;
    if (this.spent <= this.limit) return true;
    this.exceeded = this.spent > this.budget ? 'budget' : 'call';
    return false;
  }

  /** Like `charge`, but throws {@link CostLimitExceeded} — for work inside a library function. */
  use(units: number): void {
    if (!this.charge(units)) throw new CostLimitExceeded();
  }
}

/** The meter of the evaluation under way (evaluation is synchronous, so one slot is enough). */
let currentMeter: CostMeter | undefined;

/** The meter counting the evaluation under way; outside one, a meter with no limit. */
export function meter(): CostMeter {
  return currentMeter ?? UNMETERED;
}

const UNMETERED = new CostMeter(Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY);

/** Runs `fn` (one expression evaluation) with `m` counting its cost. */
export function withMeter<T>(m: CostMeter, fn: () => T): T {
  const previous = currentMeter;
  currentMeter = m;
  try {
    m.beginCall();
    return fn();
  } finally {
    currentMeter = previous;
  }
}
