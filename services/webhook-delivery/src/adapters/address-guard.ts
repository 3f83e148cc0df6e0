/**
 * The SSRF guard at connect time. Node hands the hostname to this lookup and connects to the
 * address it returns, so the address that was vetted is the one connected to: a DNS answer that
 * changes between a check and the connection (rebinding) cannot slip past. A host given as an IP
 * literal never reaches a lookup, so the sender vets those itself with `refusal` before sending.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import { refusal, type Network } from '../domain/networks.js';

/** Resolves a hostname to every address it has (tests pass their own). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

export const systemResolver: Resolver = (hostname) =>
  new Promise((resolve, reject) =>
    dnsLookup(hostname, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  );

/** Raised instead of connecting; the sender reports it as `address_refused` (permanent). */
class AddressRefusedError extends Error {
  readonly code = 'ERR_EVENTRELAY_ADDRESS_REFUSED';
}

export function guardedLookup(resolver: Resolver, allowed: readonly Network[]): LookupFunction {
  return (hostname, options, callback) => {
    resolver(hostname).then(
      (addresses) => {
        // Every address is checked, not only the one used: with happy eyeballs Node may try any.
        const family = options.family === 4 || options.family === 6 ? options.family : undefined;
        const usable = family === undefined ? addresses : addresses.filter((a) => a.family === family);
        if (usable.length === 0) return callback(Object.assign(new Error(`${hostname} has no address`), { code: 'ENOTFOUND' }), '', 4);
        for (const a of usable) {
          const why = refusal(a.address, allowed);
          if (why !== undefined) return callback(new AddressRefusedError(`${hostname} resolves to ${why}`), '', 4);
        }
        if (options.all) (callback as unknown as (err: null, all: LookupAddress[]) => void)(null, usable);
        else callback(null, usable[0]!.address, usable[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 4),
    );
  };
}
