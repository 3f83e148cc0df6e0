import { BLOCKED_NETWORKS, contains, parseAddress, parseNetwork, parseNetworkList, refusal, type Network } from './networks.js';

const MAPPED = 0xffffn << 32n;
const v4 = (a: number, b: number, c: number, d: number) => MAPPED | BigInt(((a << 24) >>> 0) + (b << 16) + (c << 8) + d);

function network(text: string): Network {
  const parsed = parseNetwork(text);
  if (!parsed) throw new Error(`${text} did not parse`);
  return parsed;
}

describe('parseAddress', () => {
  describe('IPv4', () => {
    it.each([
      ['0.0.0.0', v4(0, 0, 0, 0)],
      ['127.0.0.1', v4(127, 0, 0, 1)],
      ['10.1.2.3', v4(10, 1, 2, 3)],
      ['255.255.255.255', v4(255, 255, 255, 255)],
      ['93.184.216.34', v4(93, 184, 216, 34)],
    ])('%s maps into ::ffff:0:0/96', (text, value) => {
      expect(parseAddress(text)).toBe(value);
    });

    it.each([
      ['too few parts', '1.2.3'],
      ['too many parts', '1.2.3.4.5'],
      ['an octet above 255', '256.0.0.1'],
      ['a leading zero (octal in some parsers)', '010.0.0.1'],
      ['hex', '0x7f.0.0.1'],
      ['a single number', '2130706433'],
      ['an empty part', '1..2.3'],
      ['a sign', '-1.2.3.4'],
      ['spaces', ' 1.2.3.4'],
      ['a trailing dot', '1.2.3.4.'],
      ['empty', ''],
      ['a host name', 'localhost'],
    ])('rejects %s (%p)', (_label, text) => {
      expect(parseAddress(text)).toBeUndefined();
    });
  });

  describe('IPv6', () => {
    it.each([
      ['::', 0n],
      ['::1', 1n],
      ['1::', 1n << 112n],
      ['1:2:3:4:5:6:7:8', 0x0001_0002_0003_0004_0005_0006_0007_0008n],
      ['2001:db8::1', (0x2001_0db8n << 96n) | 1n],
      ['2001:DB8:0:0:0:0:0:1', (0x2001_0db8n << 96n) | 1n],
      ['2001:db8:0000:0000:0000:0000:0000:0001', (0x2001_0db8n << 96n) | 1n],
      ['fe80::1', (0xfe80n << 112n) | 1n],
      ['1:2:3:4:5:6:7::', 0x0001_0002_0003_0004_0005_0006_0007_0000n],
      ['::2:3:4:5:6:7:8', 0x0000_0002_0003_0004_0005_0006_0007_0008n],
      ['[::1]', 1n],
    ])('%s', (text, value) => {
      expect(parseAddress(text)).toBe(value);
    });

    it('reads the same address however it is compressed', () => {
      const forms = ['2001:db8:0:0:1:0:0:1', '2001:db8::1:0:0:1', '2001:db8:0:0:1::1', '2001:0db8:0000:0000:0001:0000:0000:0001'];
      const values = forms.map(parseAddress);
      expect(new Set(values).size).toBe(1);
      expect(values[0]).toBe((0x2001_0db8n << 96n) | (1n << 48n) | 1n);
    });

    describe('embedded IPv4', () => {
      it('::ffff:a.b.c.d is the IPv4 address itself', () => {
        expect(parseAddress('::ffff:127.0.0.1')).toBe(parseAddress('127.0.0.1'));
        expect(parseAddress('::ffff:7f00:1')).toBe(parseAddress('127.0.0.1'));
        expect(parseAddress('::FFFF:10.0.0.1')).toBe(v4(10, 0, 0, 1));
      });

      it('64:ff9b::a.b.c.d puts the IPv4 address in the last 32 bits', () => {
        expect(parseAddress('64:ff9b::10.0.0.1')).toBe((0x0064_ff9bn << 96n) | 0x0a00_0001n);
        expect(parseAddress('64:ff9b::10.0.0.1')).toBe(parseAddress('64:ff9b::a00:1'));
      });

      it('a dotted quad after six groups', () => {
        expect(parseAddress('1:2:3:4:5:6:1.2.3.4')).toBe(0x0001_0002_0003_0004_0005_0006_0102_0304n);
      });

      it.each(['::ffff:1.2.3', '::ffff:256.1.1.1', '::1.2.3.4:5', '1:2:3:4:5:6:7:1.2.3.4', '::ffff:01.2.3.4'])('rejects %p', (text) => {
        expect(parseAddress(text)).toBeUndefined();
      });
    });

    it.each([
      ['two "::"', '1::2::3'],
      ['nine groups', '1:2:3:4:5:6:7:8:9'],
      ['seven groups without "::"', '1:2:3:4:5:6:7'],
      ['"::" standing for no group', '1:2:3:4::5:6:7:8'],
      ['a group of five digits', '12345::1'],
      ['a non-hex digit', 'g::1'],
      ['a leading single colon', ':1:2:3:4:5:6:7'],
      ['a trailing single colon', '1:2:3:4:5:6:7:'],
      ['three colons', '1:::2'],
      ['a zone id', 'fe80::1%eth0'],
      ['a prefix', '::1/128'],
      ['an unclosed bracket', '[::1'],
      ['a lone colon', ':'],
    ])('rejects %s (%p)', (_label, text) => {
      expect(parseAddress(text)).toBeUndefined();
    });
  });
});

describe('parseNetwork', () => {
  it('an IPv4 CIDR becomes a prefix inside ::ffff:0:0/96', () => {
    expect(network('10.0.0.0/8')).toEqual({ text: '10.0.0.0/8', base: v4(10, 0, 0, 0), prefix: 104 });
    expect(network('192.168.0.0/16').prefix).toBe(112);
    expect(network('0.0.0.0/0').prefix).toBe(96);
  });

  it('an IPv6 CIDR keeps its prefix', () => {
    expect(network('fd00::/8')).toEqual({ text: 'fd00::/8', base: 0xfdn << 120n, prefix: 8 });
    expect(network('::/0')).toEqual({ text: '::/0', base: 0n, prefix: 0 });
  });

  it('a bare address is that one address', () => {
    expect(network('10.1.2.3')).toEqual({ text: '10.1.2.3', base: v4(10, 1, 2, 3), prefix: 128 });
    expect(network('::1')).toEqual({ text: '::1', base: 1n, prefix: 128 });
  });

  it('drops host bits and trims the text', () => {
    expect(network('  10.1.2.3/8 ')).toEqual({ text: '10.1.2.3/8', base: v4(10, 0, 0, 0), prefix: 104 });
    expect(network('2001:db8::1/32').base).toBe(0x2001_0db8n << 96n);
  });

  it.each([
    ['an IPv4 prefix above 32', '10.0.0.0/33'],
    ['an IPv6 prefix above 128', '::/129'],
    ['an empty prefix', '10.0.0.0/'],
    ['a negative prefix', '10.0.0.0/-1'],
    ['a prefix that is not a number', '10.0.0.0/eight'],
    ['two prefixes', '10.0.0.0/8/9'],
    ['no address', '/8'],
    ['a host name', 'localhost/8'],
    ['a bad address', '10.0.0.256/32'],
    ['empty', ''],
  ])('rejects %s (%p)', (_label, text) => {
    expect(parseNetwork(text)).toBeUndefined();
  });
});

describe('contains', () => {
  it('matches exactly the addresses under the prefix', () => {
    const n = network('172.16.0.0/12');
    expect(contains(n, v4(172, 16, 0, 0))).toBe(true);
    expect(contains(n, v4(172, 31, 255, 255))).toBe(true);
    expect(contains(n, v4(172, 15, 255, 255))).toBe(false);
    expect(contains(n, v4(172, 32, 0, 0))).toBe(false);
  });

  it('an IPv4 network never contains an IPv6 address outside ::ffff:0:0/96', () => {
    expect(contains(network('0.0.0.0/0'), 1n)).toBe(false);
    expect(contains(network('0.0.0.0/0'), parseAddress('2606:4700::1111')!)).toBe(false);
    expect(contains(network('0.0.0.0/0'), v4(8, 8, 8, 8))).toBe(true);
  });
});

describe('parseNetworkList', () => {
  it('splits on commas, trims, skips empty entries and reports the entries that are not networks', () => {
    const { networks, invalid } = parseNetworkList(' 10.0.0.0/8, fd00::/8 ,, 127.0.0.1 ,bogus, 1.2.3.4/33,');
    expect(networks.map((n) => n.text)).toEqual(['10.0.0.0/8', 'fd00::/8', '127.0.0.1']);
    expect(invalid).toEqual(['bogus', '1.2.3.4/33']);
  });

  it('an empty list is no networks and no problems', () => {
    expect(parseNetworkList('')).toEqual({ networks: [], invalid: [] });
    expect(parseNetworkList(' , ')).toEqual({ networks: [], invalid: [] });
  });
});

describe('refusal (the SSRF guard)', () => {
  it('every built-in blocked network parses', () => {
    for (const { network: n, why } of BLOCKED_NETWORKS) {
      expect(n).toBeDefined();
      expect(why).not.toBe('');
    }
  });

  it.each([
    ['IPv4 loopback', '127.0.0.1', 'loopback'],
    ['the rest of 127/8', '127.255.255.254', 'loopback'],
    ['IPv6 loopback', '::1', 'loopback'],
    ['10/8', '10.0.0.1', 'private'],
    ['10/8 top', '10.255.255.255', 'private'],
    ['172.16/12', '172.16.0.1', 'private'],
    ['172.16/12 top', '172.31.255.254', 'private'],
    ['192.168/16', '192.168.1.1', 'private'],
    ['100.64/10 CGNAT', '100.64.0.1', 'carrier-grade NAT'],
    ['100.64/10 CGNAT top', '100.127.255.254', 'carrier-grade NAT'],
    ['cloud metadata', '169.254.169.254', 'link-local'],
    ['AWS IPv6 metadata', 'fd00:ec2::254', 'unique local'],
    ['IPv6 link-local', 'fe80::1', 'link-local'],
    ['IPv4 multicast', '224.0.0.1', 'multicast'],
    ['IPv6 multicast', 'ff02::1', 'multicast'],
    ['IPv4-mapped loopback, dotted', '::ffff:127.0.0.1', 'loopback'],
    ['IPv4-mapped loopback, hex', '::ffff:7f00:1', 'loopback'],
    ['IPv4-mapped metadata', '::ffff:169.254.169.254', 'link-local'],
    ['NAT64 of 10.0.0.1', '64:ff9b::a00:1', 'private'],
    ['NAT64 of 127.0.0.1, dotted', '64:ff9b::127.0.0.1', 'loopback'],
    ['6to4 of 192.168.0.1', '2002:c0a8:1::1', 'private'],
    ['the unspecified IPv4 address', '0.0.0.0', 'unspecified'],
    ['the unspecified IPv6 address', '::', 'unspecified'],
    ['IPv4-compatible loopback', '::127.0.0.1', 'unspecified or IPv4-compatible'],
    ['broadcast', '255.255.255.255', 'reserved'],
  ])('refuses %s (%s)', (_label, address, why) => {
    const reason = refusal(address, []);
    expect(reason).toBeDefined();
    expect(reason).toContain(address);
    expect(reason).toContain(why);
    expect(reason).toContain('WEBHOOK_ALLOWED_NETWORKS');
  });

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '1.1.1.1',
    '2606:4700::1111',
    '2001:4860:4860::8888',
    '172.32.0.1',
    '100.128.0.1',
    '192.169.0.1',
    '11.0.0.1',
    '64:ff9b::5db8:d822',
  ])('lets the public address %s through', (address) => {
    expect(refusal(address, [])).toBeUndefined();
  });

  it('refuses what is not an IP address', () => {
    expect(refusal('localhost', [])).toBe('"localhost" is not an IP address');
    expect(refusal('', [])).toBeDefined();
  });

  describe('WEBHOOK_ALLOWED_NETWORKS', () => {
    it('an allowed network lets exactly its addresses through', () => {
      const allowed = parseNetworkList('10.1.0.0/16').networks;
      expect(refusal('10.1.0.1', allowed)).toBeUndefined();
      expect(refusal('10.1.255.254', allowed)).toBeUndefined();
      expect(refusal('::ffff:10.1.2.3', allowed)).toBeUndefined();
      expect(refusal('10.0.255.255', allowed)).toContain('private');
      expect(refusal('10.2.0.1', allowed)).toContain('private');
      expect(refusal('127.0.0.1', allowed)).toContain('loopback');
      expect(refusal('192.168.0.1', allowed)).toContain('private');
    });

    it('allowing IPv4 loopback does not allow IPv6 loopback, nor the reverse', () => {
      expect(refusal('127.0.0.1', parseNetworkList('127.0.0.0/8').networks)).toBeUndefined();
      expect(refusal('::1', parseNetworkList('127.0.0.0/8').networks)).toContain('loopback');
      expect(refusal('::1', parseNetworkList('::1/128').networks)).toBeUndefined();
      expect(refusal('127.0.0.1', parseNetworkList('::1/128').networks)).toContain('loopback');
    });

    it('a single allowed address lets only that address through', () => {
      const allowed = parseNetworkList('169.254.169.254').networks;
      expect(refusal('169.254.169.254', allowed)).toBeUndefined();
      expect(refusal('169.254.169.253', allowed)).toContain('link-local');
    });

    it('an allowed IPv4 network also covers its NAT64 form', () => {
      const allowed = parseNetworkList('10.0.0.0/8').networks;
      expect(refusal('64:ff9b::a00:1', allowed)).toBeUndefined();
      expect(refusal('64:ff9b::7f00:1', allowed)).toContain('loopback');
    });

    it('an IPv6 network allows its addresses only', () => {
      const allowed = parseNetworkList('fd00:ec2::/32').networks;
      expect(refusal('fd00:ec2::254', allowed)).toBeUndefined();
      expect(refusal('fd00:ec3::254', allowed)).toContain('unique local');
    });
  });
});
