import { AuthError, ConfigError, EventrelayError, UnavailableError, ValidationError, errorCodes, type ErrorCode } from './errors.js';

const codes = Object.keys(errorCodes) as ErrorCode[];

describe('errorCodes', () => {
  it('uses stable snake_case codes', () => {
    for (const code of codes) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it('gives an HTTP status only in the 4xx and 5xx ranges, never a 3xx', () => {
    for (const code of codes) {
      const { httpStatus } = errorCodes[code];
      if (httpStatus !== undefined) expect(httpStatus >= 400 && httpStatus <= 599).toBe(true);
    }
  });

  it('marks exactly the codes that a retry can fix as retryable', () => {
    expect(codes.filter((c) => errorCodes[c].retryable).sort()).toEqual([
      'internal_error',
      'not_replicated',
      'overloaded',
      'rate_limited',
      'service_unavailable',
      'source_over_budget',
    ]);
  });

  it('has a summary for every code', () => {
    for (const code of codes) expect(errorCodes[code].summary.length).toBeGreaterThan(10);
  });
});

describe('EventrelayError', () => {
  it.each(codes)('%s takes retryable and httpStatus from the registry', (code) => {
    const err = new EventrelayError(code, 'message');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(errorCodes[code].retryable);
    expect(err.httpStatus).toBe(errorCodes[code].httpStatus);
    expect(err.message).toBe('message');
    expect(err.name).toBe('EventrelayError');
    expect(err).toBeInstanceOf(Error);
  });

  it('keeps the cause', () => {
    const cause = new Error('redis down');
    expect(new EventrelayError('internal_error', 'x', { cause }).cause).toBe(cause);
  });
});

describe('subclasses', () => {
  it.each([
    ['invalid_request', 400],
    ['invalid_event', 400],
    ['payload_too_large', 400],
  ] as const)('ValidationError %s', (code, status) => {
    const err = new ValidationError(code, 'bad');
    expect(err).toBeInstanceOf(ValidationError);
    expect(err).toBeInstanceOf(EventrelayError);
    expect(err.name).toBe('ValidationError');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(false);
    expect(err.httpStatus).toBe(status);
  });

  it.each([
    ['missing_write_key', 400],
    ['unknown_write_key', 401],
  ] as const)('AuthError %s', (code, status) => {
    const err = new AuthError(code, 'who?');
    expect(err).toBeInstanceOf(EventrelayError);
    expect(err.name).toBe('AuthError');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(false);
    expect(err.httpStatus).toBe(status);
  });

  it.each([
    ['rate_limited', 429],
    ['source_over_budget', 429],
    ['service_unavailable', 503],
    ['overloaded', 503],
  ] as const)('UnavailableError %s is retryable and carries Retry-After', (code, status) => {
    const cause = new Error('underlying');
    const err = new UnavailableError(code, 'later', 7, { cause, resetAtEpochSeconds: 1_800_000_000 });
    expect(err).toBeInstanceOf(EventrelayError);
    expect(err.name).toBe('UnavailableError');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(true);
    expect(err.httpStatus).toBe(status);
    expect(err.retryAfterSeconds).toBe(7);
    expect(err.resetAtEpochSeconds).toBe(1_800_000_000);
    expect(err.cause).toBe(cause);
  });

  it('UnavailableError without options has no reset time', () => {
    const err = new UnavailableError('service_unavailable', 'later', 1);
    expect(err.resetAtEpochSeconds).toBeUndefined();
    expect(err.cause).toBeUndefined();
  });

  it.each(['invalid_env', 'invalid_config'] as const)('ConfigError %s has no HTTP status and is not retryable', (code) => {
    const cause = new SyntaxError('json');
    const err = new ConfigError(code, 'bad start-up input', { cause });
    expect(err).toBeInstanceOf(EventrelayError);
    expect(err.name).toBe('ConfigError');
    expect(err.code).toBe(code);
    expect(err.retryable).toBe(false);
    expect(err.httpStatus).toBeUndefined();
    expect(err.cause).toBe(cause);
  });

  it('subclasses are distinct', () => {
    expect(new ValidationError('invalid_event', 'x')).not.toBeInstanceOf(AuthError);
    expect(new AuthError('unknown_write_key', 'x')).not.toBeInstanceOf(UnavailableError);
    expect(new ConfigError('invalid_env', 'x')).not.toBeInstanceOf(ValidationError);
  });
});
