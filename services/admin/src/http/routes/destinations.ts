/** Destinations: create, read, change (the enabled switch too), rotate the secret, delete. */
import type {
  Destination,
  DestinationCreate,
  DestinationPatch,
  PreviewRequest,
  SecretRotated,
  SecretRotation,
  UnsavedPreviewRequest,
} from '@eventrelay/config';
import {
  existingDestination,
  planCreateDestination,
  planDeleteDestination,
  planPatchDestination,
  planRotateSecret,
} from '../../domain/destinations.js';
import { toDestinationView } from '../../domain/destination-view.js';
import { previewDelivery } from '../../domain/preview.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { byId, ok, param, type RouteKit } from './kit.js';

export function destinationRoutes({ deps, ctx, write, read }: RouteKit): RouteSpec[] {
  const preview = (destination: Destination, { call, sourceId }: PreviewRequest) =>
    ok(previewDelivery({ destination, call, sourceId, now: deps.clock(), newMessageId: deps.newTestMessageId }));
  return [
    {
      method: 'get',
      path: '/destinations',
      operationId: 'listDestinations',
      summary: 'All destinations, by id (shared secrets and header values shown only as hints)',
      answer: { status: 200, schema: 'DestinationView', list: true, description: 'the destinations' },
      errors: [],
      handle: async () => ok(await read((s) => [...s.destinations.values()].sort(byId).map(toDestinationView))),
    },
    {
      method: 'post',
      path: '/destinations',
      operationId: 'createDestination',
      summary: 'Create a destination of a catalog type; it starts disabled unless "enabled": true',
      body: 'DestinationCreate',
      answer: { status: 201, schema: 'DestinationView', description: 'the new destination' },
      errors: ['invalid_request', 'conflict'],
      handle: async (req: AdminRequest<DestinationCreate>) => ({
        status: 201,
        body: toDestinationView(await write((s) => planCreateDestination(s, req.body, deps.newId('dst'), ctx(req)))),
      }),
    },
    {
      method: 'post',
      path: '/destinations/preview',
      operationId: 'previewUnsavedDestination',
      summary:
        "What a destination that is not saved yet would do with a sample call: its filters' decision, and each request's exact body and headers",
      body: 'UnsavedPreviewRequest',
      answer: { status: 200, schema: 'PreviewResult', description: 'the decision and the requests' },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<UnsavedPreviewRequest>) =>
        // Planned as a create (every check of a save), never written.
        preview(
          await read((s) => planCreateDestination(s, { ...req.body.destination, id: undefined }, deps.newId('dst'), ctx(req)).result),
          req.body,
        ),
    },
    {
      method: 'post',
      path: '/destinations/:id/preview',
      operationId: 'previewDestination',
      summary: "What a destination would do with a sample call: its filters' decision, and each request's exact body and headers",
      body: 'PreviewRequest',
      answer: { status: 200, schema: 'PreviewResult', description: 'the decision and the requests' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<PreviewRequest>) => preview(await read((s) => existingDestination(s, param(req, 'id'))), req.body),
    },
    {
      method: 'get',
      path: '/destinations/:id',
      operationId: 'getDestination',
      summary: 'One destination',
      answer: { status: 200, schema: 'DestinationView', description: 'the destination' },
      errors: ['not_found'],
      handle: async (req) => ok(toDestinationView(await read((s) => existingDestination(s, param(req, 'id'))))),
    },
    {
      method: 'patch',
      path: '/destinations/:id',
      operationId: 'updateDestination',
      summary:
        'Change URLs, headers, secret, delivery settings, sources or the enabled switch (JSON merge patch); takes effect everywhere within 2 s',
      body: 'DestinationPatch',
      answer: { status: 200, schema: 'DestinationView', description: 'the destination as stored' },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<DestinationPatch>) =>
        ok(toDestinationView(await write((s) => planPatchDestination(s, param(req, 'id'), req.body, ctx(req))))),
    },
    {
      method: 'post',
      path: '/destinations/:id/rotate-secret',
      operationId: 'rotateDestinationSecret',
      summary:
        'Give a destination a new shared secret (shown this once); the current one keeps signing next to it for overlapMs (default 24 h)',
      body: 'SecretRotation',
      answer: {
        status: 200,
        schema: 'SecretRotated',
        description: 'the new secret, when the replaced one stops signing, and the destination',
      },
      errors: ['invalid_request', 'not_found'],
      handle: async (req: AdminRequest<SecretRotation>) => {
        const rotated = await write((s) => planRotateSecret(s, param(req, 'id'), req.body, deps.newSecret(), ctx(req)));
        const answer: SecretRotated = {
          secret: rotated.secret,
          ...(rotated.previousExpiresAt !== undefined ? { previousExpiresAt: rotated.previousExpiresAt } : {}),
          destination: toDestinationView(rotated.destination),
        };
        return ok(answer);
      },
    },
    {
      method: 'delete',
      path: '/destinations/:id',
      operationId: 'deleteDestination',
      summary: 'Delete a destination with its attempt log and dead letters; its queued messages are dropped',
      answer: { status: 204, description: 'deleted' },
      errors: ['not_found'],
      handle: async (req) => {
        await write((s) => planDeleteDestination(s, param(req, 'id'), ctx(req)));
        return { status: 204 };
      },
    },
  ];
}
