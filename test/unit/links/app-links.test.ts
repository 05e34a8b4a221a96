import {
  appleAppSiteAssociation,
  assetLinks,
  isAndroidPackage,
  isCertSha256,
  isIosAppId,
  isLinkDomain,
  type LinkDomainApp,
  linkDomainOfHost,
  wellKnownFile,
} from '../../../functions/domain/links/app-links';

/** The fingerprint in Google's App Links documentation ("Declare website associations"). */
const GOOGLE_FINGERPRINT = '14:6D:E9:83:C5:73:06:50:D8:EE:B9:95:2F:34:FC:64:16:A0:83:42:E6:1D:BE:A8:8A:04:96:B2:3F:CF:44:E5';

describe('the link identity formats', () => {
  it.each([
    ['ABCDE12345.com.example.app', true],
    ['9JA89QQLNQ.com.apple.wwdc', true],
    ['ABCDE12345.com.example-app.Beta', true],
    ['abcde12345.com.example.app', false],
    ['ABCDE1234.com.example.app', false],
    ['ABCDE12345', false],
    ['ABCDE12345.', false],
    ['ABCDE12345.com..app', false],
    ['ABCDE12345.com.example_app', false],
    [`ABCDE12345.${'a'.repeat(150)}`, false],
  ])('iOS app id %s: %s', (value, valid) => expect(isIosAppId(value)).toBe(valid));

  it.each([
    ['com.example.app', true],
    ['com.example.app_2', true],
    ['app', false],
    ['com.1example.app', false],
    ['com.example.', false],
    ['com example', false],
  ])('Android package %s: %s', (value, valid) => expect(isAndroidPackage(value)).toBe(valid));

  it.each([
    [GOOGLE_FINGERPRINT, true],
    [GOOGLE_FINGERPRINT.toLowerCase(), false],
    [GOOGLE_FINGERPRINT.slice(3), false],
    [`${GOOGLE_FINGERPRINT}:00`, false],
    [GOOGLE_FINGERPRINT.replace(/:/g, ''), false],
  ])('certificate fingerprint %s: %s', (value, valid) => expect(isCertSha256(value)).toBe(valid));

  it.each([
    ['go.example.com', true],
    ['example.co.uk', true],
    ['Go.Example.com', false],
    ['*.example.com', false],
    ['localhost', false],
    ['go.example.com.', false],
    ['go_example.com', false],
  ])('link domain %s: %s', (value, valid) => expect(isLinkDomain(value)).toBe(valid));

  it("reads a request's host as its link domain: case, port and trailing dot aside", () => {
    expect(linkDomainOfHost('GO.Example.com:443')).toBe('go.example.com');
    expect(linkDomainOfHost('go.example.com.')).toBe('go.example.com');
    expect(linkDomainOfHost('127.0.0.1:3000')).toBeUndefined();
    expect(linkDomainOfHost('')).toBeUndefined();
    expect(linkDomainOfHost(undefined)).toBeUndefined();
    expect(linkDomainOfHost(`${'a'.repeat(300)}.com`)).toBeUndefined();
  });
});

describe('apple-app-site-association', () => {
  it("is byte for byte Apple's documented simple association file, for its two apps and the link paths", () => {
    // Apple, "Supporting associated domains": applinks.details[].appIDs with components; the
    // components here are the tracking links' paths, /l/{link_id}.
    const documented = {
      applinks: {
        details: [{ appIDs: ['ABCDE12345.com.example.app', 'ABCDE12345.com.example.app2'], components: [{ '/': '/l/*' }] }],
      },
    };
    const apps: LinkDomainApp[] = [
      { app_id: 'app_2', ios_app_id: 'ABCDE12345.com.example.app2' },
      { app_id: 'app_1', ios_app_id: 'ABCDE12345.com.example.app', android_package: 'com.example.app' },
    ];
    expect(appleAppSiteAssociation(apps)).toBe(JSON.stringify(documented));
    expect(appleAppSiteAssociation([...apps].reverse())).toBe(appleAppSiteAssociation(apps));
  });

  it('names each app id once and is absent when no app on the domain is an iOS app', () => {
    expect(
      appleAppSiteAssociation([
        { app_id: 'a', ios_app_id: 'ABCDE12345.com.x' },
        { app_id: 'b', ios_app_id: 'ABCDE12345.com.x' },
      ]),
    ).toBe('{"applinks":{"details":[{"appIDs":["ABCDE12345.com.x"],"components":[{"/":"/l/*"}]}]}}');
    expect(appleAppSiteAssociation([{ app_id: 'a', android_package: 'com.x.y' }])).toBeUndefined();
    expect(appleAppSiteAssociation([])).toBeUndefined();
  });
});

describe('assetlinks.json', () => {
  it("is byte for byte Google's documented statement list for its app", () => {
    // Google, "Verify Android App Links" / Digital Asset Links "Getting started".
    const documented = [
      {
        relation: ['delegate_permission/common.handle_all_urls'],
        target: { namespace: 'android_app', package_name: 'com.example.app', sha256_cert_fingerprints: [GOOGLE_FINGERPRINT] },
      },
    ];
    expect(assetLinks([{ app_id: 'a', android_package: 'com.example.app', android_cert_sha256: [GOOGLE_FINGERPRINT] }])).toBe(
      JSON.stringify(documented),
    );
  });

  it('has one statement per Android app with a fingerprint, in app order, and is absent without one', () => {
    const two = '00:'.repeat(31) + '01';
    const body = assetLinks([
      { app_id: 'b', android_package: 'com.b.app', android_cert_sha256: [two, GOOGLE_FINGERPRINT] },
      { app_id: 'a', android_package: 'com.a.app', android_cert_sha256: [GOOGLE_FINGERPRINT] },
      { app_id: 'c', android_package: 'com.c.app' },
      { app_id: 'd', ios_app_id: 'ABCDE12345.com.d' },
    ]);
    const statements = JSON.parse(body ?? '[]') as { target: { package_name: string; sha256_cert_fingerprints: string[] } }[];
    expect(statements.map((s) => s.target.package_name)).toEqual(['com.a.app', 'com.b.app']);
    expect(statements[1]?.target.sha256_cert_fingerprints).toEqual([two, GOOGLE_FINGERPRINT]);
    expect(assetLinks([{ app_id: 'c', android_package: 'com.c.app', android_cert_sha256: [] }])).toBeUndefined();
  });
});

describe('wellKnownFile', () => {
  const apps: LinkDomainApp[] = [
    {
      app_id: 'a',
      ios_app_id: 'ABCDE12345.com.example.app',
      android_package: 'com.example.app',
      android_cert_sha256: [GOOGLE_FINGERPRINT],
    },
  ];
  const looked: string[] = [];
  const domains = {
    apps: async (domain: string) => {
      looked.push(domain);
      return domain === 'go.example.com' ? apps : domain === 'empty.example.com' ? [] : undefined;
    },
  };

  it('answers each file for a configured domain, by its host', async () => {
    expect(await wellKnownFile(domains, 'Go.Example.com', '/.well-known/apple-app-site-association')).toBe(appleAppSiteAssociation(apps));
    expect(await wellKnownFile(domains, 'go.example.com:443', '/.well-known/assetlinks.json')).toBe(assetLinks(apps));
  });

  it('answers nothing for another domain, a domain without apps, another path or a host that is no DNS name (not looked up)', async () => {
    looked.length = 0;
    expect(await wellKnownFile(domains, 'other.example.com', '/.well-known/assetlinks.json')).toBeUndefined();
    expect(await wellKnownFile(domains, 'empty.example.com', '/.well-known/assetlinks.json')).toBeUndefined();
    expect(await wellKnownFile(domains, 'go.example.com', '/.well-known/security.txt')).toBeUndefined();
    expect(await wellKnownFile(domains, '127.0.0.1:3000', '/.well-known/assetlinks.json')).toBeUndefined();
    expect(await wellKnownFile(domains, undefined, '/.well-known/assetlinks.json')).toBeUndefined();
    expect(looked).toEqual(['other.example.com', 'empty.example.com']);
  });
});
