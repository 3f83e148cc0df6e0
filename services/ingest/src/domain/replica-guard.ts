/**
 * Durable mode's replica guard (docs/deployment.md, "Durable mode"): a 200 needs the replicas to
 * confirm the flush, so while fewer than required are online the intake refuses at once, storing
 * nothing, instead of writing calls it could only answer 503 for after a WAIT timed out. Pure: the
 * adapter samples `INFO replication` and asks this function.
 */

/**
 * How many replicas the primary reports online (`slaveN:ip=…,state=online,…`; one in full sync is
 * `wait_bgsave` or `send_bulk`, and confirms nothing yet). Undefined when the text is not a
 * primary's (`role:master`), e.g. read from a replica during a failover.
 */
export function onlineReplicas(info: string): number | undefined {
  if (!/^role:master\s*$/m.test(info)) return undefined;
  let online = 0;
  for (const line of info.split('\n')) if (/^slave\d+:/.test(line) && /(^|[:,])state=online(,|\s*$)/.test(line)) online++;
  return online;
}

/**
 * The replicas every primary has online at least (a Redis Cluster: a flush goes to one of them);
 * undefined when a text is not a primary's, as onlineReplicas.
 */
export function fewestOnline(infos: readonly string[]): number | undefined {
  let fewest: number | undefined;
  for (const info of infos) {
    const online = onlineReplicas(info);
    if (online === undefined) return undefined;
    fewest = fewest === undefined ? online : Math.min(fewest, online);
  }
  return fewest;
}
