/** The OpenAPI document, this installation, the catalog, the config export and the stats. */
import { destinationCatalog, exportConfig, type CatalogEntry, type StatsQuery } from '@eventrelay/config';
import { buildStatsReport, planWindow } from '../../domain/stats.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { ok, type RouteKit } from './kit.js';

export function systemRoutes({ deps, read }: RouteKit): RouteSpec[] {
  return [
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'getOpenApi',
      summary: 'This document (OpenAPI 3.1), served without a token',
      answer: { status: 200, description: 'the OpenAPI document' },
      errors: [],
      public: true,
      handle: () => Promise.resolve(ok(deps.openApi())),
    },
    {
      method: 'get',
      path: '/info',
      operationId: 'getInfo',
      summary: "This installation: eventrelay's version and the intake's public URL (ADMIN_INTAKE_URL)",
      answer: { status: 200, schema: 'ConsoleInfo', description: 'the installation' },
      errors: [],
      handle: () => Promise.resolve(ok(deps.info)),
    },
    {
      method: 'get',
      path: '/catalog',
      operationId: 'listCatalog',
      summary: 'The destination types available, each with the JSON Schema of its settings',
      answer: { status: 200, schema: 'CatalogEntry', list: true, description: 'the catalog' },
      errors: [],
      handle: () =>
        Promise.resolve(
          ok(destinationCatalog.map(({ name, description, settingsSchema }): CatalogEntry => ({ name, description, settingsSchema }))),
        ),
    },
    {
      method: 'get',
      path: '/config',
      operationId: 'exportConfig',
      summary: 'Everything as a declarative config file (EVENTRELAY_CONFIG), shared secrets and header values left out',
      answer: {
        status: 200,
        schema: 'EventrelayConfig',
        description: 'the config; applying it again changes nothing, and keeps the stored secrets and header values',
      },
      errors: [],
      handle: async () => ok(await read(exportConfig)),
    },
    {
      method: 'get',
      path: '/stats',
      operationId: 'getStats',
      summary:
        'Per destination (delivered, retrying, dead-lettered, attempts, lag) and per source (accepted, rejected): a series over the last hour by minute, or the last day by ten minutes, with totals',
      query: 'StatsQuery',
      answer: { status: 200, schema: 'StatsReport', description: 'every destination and source, by id' },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<never, StatsQuery>) => {
        const now = deps.clock();
        const plan = planWindow(req.query.window ?? 'hour', now);
        const [raw, config] = await Promise.all([
          deps.stats.read(plan.resolution, plan.buckets),
          read((s) => ({ destinations: [...s.destinations.values()], sources: [...s.sources.values()] })),
        ]);
        return ok(buildStatsReport(plan, raw, config, now));
      },
    },
  ];
}
