/**
 * The OpenAPI document as a pure value, without a running service: the route table needs its
 * dependencies only when a route is called, so placeholders do for describing it. Used by the
 * committed copy's generator and its drift test.
 */
import { OPENAPI_VERSION, buildOpenApi } from './openapi.js';
import { adminRoutes, type AdminDeps } from './routes/index.js';

export function openApiDocument(): Record<string, unknown> {
  const unused = () => {
    throw new Error('only described, never called');
  };
  const deps = new Proxy({}, { get: () => unused }) as AdminDeps;
  return buildOpenApi(adminRoutes(deps), OPENAPI_VERSION);
}
