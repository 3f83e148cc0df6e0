/**
 * How an admin route is declared: once, with the schemas of its body, query and answer. The
 * express app and the OpenAPI document are both built from these declarations, so the document
 * describes exactly what the routes validate and answer.
 */
import type { AdminApiDefinition } from '@eventrelay/config';
import type { AdminToken } from '../domain/tokens.js';

/** A component of the OpenAPI document: a schema file's title or a definition's name. */
type SchemaName = string;

export interface AdminRequest<Body = unknown, Query = unknown> {
  readonly params: Readonly<Record<string, string>>;
  readonly query: Query;
  readonly body: Body;
  readonly token: AdminToken;
}

export interface Answer {
  readonly status: number;
  readonly body?: unknown;
}

export interface RouteSpec {
  readonly method: 'get' | 'post' | 'patch' | 'delete';
  /** Under /admin/v1, express style (`/sources/:id`). */
  readonly path: string;
  readonly operationId: string;
  readonly summary: string;
  readonly body?: AdminApiDefinition;
  readonly query?: AdminApiDefinition;
  readonly answer: {
    readonly status: 200 | 201 | 202 | 204;
    readonly schema?: SchemaName;
    readonly list?: boolean;
    readonly description: string;
  };
  /** Error codes this route can answer with besides 401 and 500, for the document. */
  readonly errors: readonly ('invalid_request' | 'not_found' | 'conflict')[];
  /** Served without a token (the OpenAPI document itself). */
  readonly public?: boolean;
  // The validators have checked body and query against the declared schemas by the time this runs.
  readonly handle: (req: AdminRequest<never, never>) => Promise<Answer>;
}

export const ADMIN_BASE = '/admin/v1';
