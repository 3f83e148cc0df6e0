import { onlineReplicas } from './replica-guard.js';

const primary = (...replicas: string[]) =>
  [
    '# Replication',
    'role:master',
    `connected_slaves:${replicas.length}`,
    ...replicas.map((r, i) => `slave${i}:${r}`),
    'master_repl_offset:9',
  ].join('\r\n');

describe('onlineReplicas', () => {
  it('counts the replicas in state online only', () => {
    expect(onlineReplicas(primary())).toBe(0);
    expect(onlineReplicas(primary('ip=10.0.0.2,port=6379,state=online,offset=9,lag=0'))).toBe(1);
    expect(
      onlineReplicas(
        primary(
          'ip=10.0.0.2,port=6379,state=online,offset=9,lag=0',
          'ip=10.0.0.3,port=6379,state=wait_bgsave,offset=0,lag=0',
          'ip=10.0.0.4,port=6379,state=send_bulk,offset=0,lag=0',
          'ip=10.0.0.5,port=6379,state=online,offset=9,lag=1',
        ),
      ),
    ).toBe(2);
  });

  it('knows nothing from a replica or from text that is not INFO replication', () => {
    expect(onlineReplicas('# Replication\r\nrole:slave\r\nmaster_host:10.0.0.1\r\nmaster_link_status:up\r\n')).toBeUndefined();
    expect(onlineReplicas('')).toBeUndefined();
    expect(onlineReplicas('used_memory:1000')).toBeUndefined();
  });
});
