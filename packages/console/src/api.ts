/**
 * The admin API from the browser: same origin, the token as a bearer header, never a cookie (so
 * no request can be forged from another site). A 401 anywhere signs the user out.
 */
import { toApiProblem, type ApiProblem } from './lib/api-errors';

const API_BASE = '/admin/v1';
const TOKEN_KEY = 'eventrelay.console.token';

export class ApiError extends Error {
  constructor(readonly problem: ApiProblem) {
    super(problem.message);
  }
}

export interface Api {
  get<T>(path: string): Promise<T>;
  post<T>(path: string, body?: unknown): Promise<T>;
  patch<T>(path: string, body: unknown): Promise<T>;
  del(path: string): Promise<void>;
}

export function createApi(token: string, onUnauthorized: () => void): Api {
  async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(`${API_BASE}${path}`, {
        method,
        credentials: 'omit',
        cache: 'no-store',
        headers: { Authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'Content-Type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError({ status: 0, code: 'network_error', message: 'The admin API cannot be reached.', fields: [] });
    }
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      parsed = text;
    }
    if (res.status === 401) onUnauthorized();
    if (!res.ok) throw new ApiError(toApiProblem(res.status, parsed));
    return parsed as T;
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body ?? {}),
    patch: (path, body) => call('PATCH', path, body),
    del: (path) => call('DELETE', path),
  };
}

/** Checks a token before keeping it: true when the API takes it, false on 401, throws otherwise. */
export async function tokenAccepted(token: string): Promise<boolean> {
  try {
    await createApi(token, () => undefined).get('/catalog');
    return true;
  } catch (err) {
    if (err instanceof ApiError && err.problem.status === 401) return false;
    throw err;
  }
}

export const session = {
  load: (): string | null => sessionStorage.getItem(TOKEN_KEY),
  save: (token: string): void => sessionStorage.setItem(TOKEN_KEY, token),
  clear: (): void => sessionStorage.removeItem(TOKEN_KEY),
};

export const encode = encodeURIComponent;
