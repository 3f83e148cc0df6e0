/**
 * Every admin route (docs/spec.md §6), in the order of the OpenAPI document, each a thin
 * translator: read or plan through the domain, write through the store, answer.
 */
import type { RouteSpec } from '../route-spec.js';
import { audienceRoutes } from './audiences.js';
import { auditRoutes } from './audit.js';
import { deliveryRecordRoutes } from './delivery-records.js';
import { destinationRoutes } from './destinations.js';
import { routeKit, type AdminDeps } from './kit.js';
import { regulationRoutes } from './regulations.js';
import { sourceRoutes } from './sources.js';
import { systemRoutes } from './system.js';

export type { AdminDeps } from './kit.js';

export function adminRoutes(deps: AdminDeps): RouteSpec[] {
  const kit = routeKit(deps);
  return [
    ...systemRoutes(kit),
    ...sourceRoutes(kit),
    ...destinationRoutes(kit),
    ...deliveryRecordRoutes(kit),
    ...audienceRoutes(kit),
    ...regulationRoutes(kit),
    ...auditRoutes(kit),
  ];
}
