/** Audiences: create, read, delete (no PATCH: delete and create again). */
import type { Audience, AudienceCreate } from '@eventrelay/config';
import { existingAudience, planCreateAudience, planDeleteAudience, toAudienceView } from '../../domain/audiences.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { byId, ok, param, type RouteKit } from './kit.js';

export function audienceRoutes({ deps, ctx, write, read }: RouteKit): RouteSpec[] {
  const audienceViews = async (audiences: Audience[]) => {
    const status = await deps.audienceStatus.read(audiences.map((a) => a.id));
    return audiences.map((a, i) => toAudienceView(a, status[i]?.pass ?? {}, status[i]?.members ?? 0));
  };

  return [
    {
      method: 'get',
      path: '/audiences',
      operationId: 'listAudiences',
      summary: 'All audiences, by id, with their membership trait and member counts',
      answer: { status: 200, schema: 'AudienceView', list: true, description: 'the audiences' },
      errors: [],
      handle: async () => ok(await audienceViews(await read((s) => [...s.audiences.values()].sort(byId)))),
    },
    {
      method: 'post',
      path: '/audiences',
      operationId: 'createAudience',
      summary:
        'Create an audience; within seconds every current member among the profiles kept is sent one identify with the trait true (the backfill), and later only changes. Profiles are kept only from calls of sources some audience reads: an audience gathers from when it exists',
      body: 'AudienceCreate',
      answer: {
        status: 201,
        schema: 'AudienceView',
        description: 'the new audience (membership pending until the audiences service starts its backfill)',
      },
      errors: ['invalid_request', 'conflict'],
      handle: async (req: AdminRequest<AudienceCreate>) => {
        const audience = await write((s) => planCreateAudience(s, req.body, deps.newId('aud'), ctx(req)));
        const [view] = await audienceViews([audience]);
        return { status: 201, body: view };
      },
    },
    {
      method: 'get',
      path: '/audiences/:id',
      operationId: 'getAudience',
      summary: 'One audience',
      answer: { status: 200, schema: 'AudienceView', description: 'the audience' },
      errors: ['not_found'],
      handle: async (req) => {
        const [view] = await audienceViews([await read((s) => existingAudience(s, param(req, 'id')))]);
        return ok(view);
      },
    },
    {
      method: 'delete',
      path: '/audiences/:id',
      operationId: 'deleteAudience',
      summary: 'Delete an audience with its membership; members are not sent false',
      answer: { status: 204, description: 'deleted' },
      errors: ['not_found'],
      handle: async (req) => {
        await write((s) => planDeleteAudience(s, param(req, 'id'), ctx(req)));
        return { status: 204 };
      },
    },
  ];
}
