/** Regulations (deletion and suppression), carried out by the audiences service. */
import { RequestError, type RegulationCreate } from '@eventrelay/config';
import { planRegulation, regulationView } from '../../domain/regulations.js';
import { auditEntry } from '../../domain/write-context.js';
import type { AdminRequest, RouteSpec } from '../route-spec.js';
import { ok, param, type RouteKit } from './kit.js';

export function regulationRoutes({ deps, ctx }: RouteKit): RouteSpec[] {
  return [
    {
      method: 'post',
      path: '/regulations',
      operationId: 'createRegulation',
      summary:
        'Delete and/or suppress users: delete notifications to every affected source with Webhooks enabled, their profiles erased, their later calls dropped',
      body: 'RegulationCreate',
      answer: {
        status: 202,
        schema: 'Regulation',
        description: 'accepted; the audiences service carries it out (poll GET /regulations/:id)',
      },
      errors: ['invalid_request'],
      handle: async (req: AdminRequest<RegulationCreate>) => {
        const { job, record } = planRegulation(await deps.store.snapshot(), req.body, deps.newId('reg'), ctx(req).now);
        // Queued first: if the record cannot be written after, the job still runs and writes it.
        await deps.queueRegulation(job);
        await deps.regulations.create(record);
        await deps.audit.record(
          auditEntry(ctx(req), 'regulation.create', job.id, {
            regulationType: record.regulationType,
            subjects: record.subjectCount,
            ...(record.sourceIds ? { sourceIds: record.sourceIds } : {}),
          }),
        );
        return { status: 202, body: regulationView(record, []) };
      },
    },
    {
      method: 'get',
      path: '/regulations/:id',
      operationId: 'getRegulation',
      summary:
        'A regulation: status (pending, running, finished), counts and, for a deletion, its receipts: per destination, whether its delete notices were delivered',
      answer: { status: 200, schema: 'Regulation', description: 'the regulation' },
      errors: ['not_found'],
      handle: async (req) => {
        const id = param(req, 'id');
        const [found, receipts] = await Promise.all([deps.regulations.get(id), deps.receipts.read(id)]);
        if (!found) throw new RequestError('not_found', `no regulation "${id}"`);
        return ok(regulationView(found, receipts));
      },
    },
  ];
}
