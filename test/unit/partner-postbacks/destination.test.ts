import {
  checkDestination,
  DestinationRefused,
  type Resolve,
  refusedAddress,
} from '../../../functions/domain/partner-postbacks/destination';

const strict = { allowLoopback: false };
const local = { allowLoopback: true };
const resolving =
  (table: Record<string, string[]>): Resolve =>
  async (host) => {
    const addresses = table[host];
    if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
    return addresses.map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
const dns = resolving({
  'partner.example': ['93.184.215.14'],
  'internal.example': ['10.1.2.3'],
  'mixed.example': ['93.184.215.14', '192.168.1.10'],
  'v6.example': ['2606:4700:4700::1111'],
  localhost: ['127.0.0.1', '::1'],
});

describe('postback destinations (server-side request forgery)', () => {
  it.each([
    ['10.0.0.1', 'private'],
    ['172.16.5.4', 'private'],
    ['192.168.0.1', 'private'],
    ['127.0.0.1', 'loopback'],
    ['::1', 'loopback'],
    ['169.254.169.254', 'metadata'],
    ['169.254.10.10', 'linkLocal'],
    ['fe80::1', 'linkLocal'],
    ['fd00:ec2::254', 'uniqueLocal'],
    ['fc00::1', 'uniqueLocal'],
    ['100.64.0.1', 'carrierGradeNat'],
    ['100.100.100.200', 'carrierGradeNat'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['::ffff:10.0.0.1', 'private'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['64:ff9b::a00:1', 'rfc6052'],
    ['168.63.129.16', 'metadata'],
  ])('refuses %s (%s)', (address, why) => {
    expect(refusedAddress(address, strict)).toBe(why);
  });

  it.each(['93.184.215.14', '8.8.8.8', '2606:4700:4700::1111'])('allows the public address %s', (address) => {
    expect(refusedAddress(address, strict)).toBeUndefined();
  });

  it('allows IPv4 loopback only where the local runtime allows it, never ::1', () => {
    expect(refusedAddress('127.0.0.1', local)).toBeUndefined();
    expect(refusedAddress('::1', local)).toBe('loopback');
  });

  it.each([
    ['https://10.0.0.1/cb', /10\.0\.0\.1, a private address/],
    ['https://169.254.169.254/latest/meta-data/', /metadata/],
    ['https://[::1]/cb', /loopback/],
    ['https://[fd00:ec2::254]/cb', /uniqueLocal/],
    ['https://internal.example/cb', /internal\.example resolves to 10\.1\.2\.3, a private address/],
    ['https://mixed.example/cb', /192\.168\.1\.10/],
    ['https://localhost/cb', /loopback/],
    ['http://partner.example/cb', /only https/],
    ['https://nowhere.example/cb', /does not resolve/],
  ])('refuses %s in AWS', async (url, message) => {
    await expect(checkDestination(url, strict, dns)).rejects.toThrow(DestinationRefused);
    await expect(checkDestination(url, strict, dns)).rejects.toThrow(message);
  });

  it('gives the checked address to connect to', async () => {
    await expect(checkDestination('https://partner.example/cb?x=1', strict, dns)).resolves.toMatchObject({
      address: { address: '93.184.215.14', family: 4 },
    });
    await expect(checkDestination('https://v6.example/', strict, dns)).resolves.toMatchObject({ address: { family: 6 } });
  });

  it('allows http to 127.0.0.1 locally, and http nowhere else', async () => {
    await expect(checkDestination('http://127.0.0.1:9000/cb', local, dns)).resolves.toMatchObject({ address: { address: '127.0.0.1' } });
    await expect(checkDestination('http://127.0.0.1:9000/cb', strict, dns)).rejects.toThrow(/only https/);
    await expect(checkDestination('http://partner.example/cb', local, dns)).rejects.toThrow(/loopback address only/);
  });
});
