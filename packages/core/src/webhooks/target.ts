import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { BlockList, isIP } from 'node:net';
import { SvcError } from '../kernel/errors/svc-error.js';

/**
 * Where a webhook may go (SPEC-3 §3, docs/webhooks.md "Targets"): an absolute `https://` URL (`http://` too
 * while `webhooks_allow_private_targets`), whose host is not and does not resolve to a loopback, private,
 * link-local or unique-local address unless that setting allows it. The check covers every address the name
 * resolves to, and the attempt connects only to the addresses that were checked (the `lookup` below is the
 * connection's resolver), so a name cannot answer a public address to the check and a private one to the
 * connection.
 */

const forbidden = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8], // "this network"
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // carrier-grade NAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata services)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15], // benchmarking
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved and broadcast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['fc00::', 7], // unique-local
  ['fe80::', 10], // link-local
  ['ff00::', 8], // multicast
] as const) {
  forbidden.addSubnet(net, prefix, 'ipv6');
}

/** Whether `address` (an IP literal) is loopback, private, link-local, unique-local or otherwise not public. */
export function isPrivateAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return forbidden.check(address, 'ipv4');
  if (family !== 6) return true;
  const lower = address.toLowerCase();
  // IPv4-mapped (::ffff:a.b.c.d), IPv4-compatible and NAT64 (64:ff9b::/96) forms reach the embedded address.
  const embedded = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (embedded) return forbidden.check(embedded[1]!, 'ipv4');
  const mappedHex = /^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(lower);
  if (mappedHex) {
    const hi = parseInt(mappedHex[1]!, 16),
      lo = parseInt(mappedHex[2]!, 16);
    return forbidden.check(`${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`, 'ipv4');
  }
  return forbidden.check(address, 'ipv6');
}

/** Parses a webhook URL; 422 `webhook.url_invalid` unless absolute `https://` (or `http://` when allowed). */
export function parseWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new SvcError('webhook.url_invalid');
  }
  const httpAllowed = allowPrivate && url.protocol === 'http:';
  if ((url.protocol !== 'https:' && !httpAllowed) || url.hostname === '' || url.username || url.password) {
    throw new SvcError('webhook.url_invalid');
  }
  return url;
}

/** The host of `url` without the brackets of an IPv6 literal. */
export function hostOf(url: URL): string {
  return url.hostname.replace(/^\[(.*)\]$/, '$1');
}

function resolveAll(host: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(host, { all: true, verbatim: true }, (error, addresses) =>
      error ? reject(error) : resolve(addresses),
    );
  });
}

/**
 * 422 `webhook.url_forbidden` when the host of `url` is or resolves to a private address (SPEC-3 §3: at
 * creation and at a change of the URL). A name that does not resolve now is accepted: each attempt checks again.
 */
export async function assertPublicTarget(url: URL, allowPrivate: boolean): Promise<void> {
  if (allowPrivate) return;
  const host = hostOf(url);
  if (isIP(host)) {
    if (isPrivateAddress(host)) throw new SvcError('webhook.url_forbidden');
    return;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await resolveAll(host);
  } catch {
    return;
  }
  if (addresses.some((a) => isPrivateAddress(a.address))) throw new SvcError('webhook.url_forbidden');
}

/** The error of an attempt refused before connecting (its `lastError`). */
export class ForbiddenTargetError extends Error {
  constructor(host: string) {
    super(`target ${host} is a private address (webhook.url_forbidden)`);
  }
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void;

/**
 * The resolver of one attempt's connection (`lookup` of `http.request`): resolves every address, refuses the
 * connection when any of them is private (unless allowed), and hands the socket exactly those addresses.
 */
export function pinnedLookup(allowPrivate: boolean) {
  return (hostname: string, options: { all?: boolean; family?: number }, callback: LookupCallback) => {
    resolveAll(hostname).then(
      (addresses) => {
        if (!allowPrivate && addresses.some((a) => isPrivateAddress(a.address))) {
          callback(new ForbiddenTargetError(hostname), []);
          return;
        }
        if (options.all) callback(null, addresses);
        else callback(null, addresses[0]!.address, addresses[0]!.family);
      },
      (error: NodeJS.ErrnoException) => callback(error, []),
    );
  };
}
