import * as acm from 'aws-cdk-lib/aws-certificatemanager';
import * as route53 from 'aws-cdk-lib/aws-route53';
import type { Construct } from 'constructs';

/** A custom domain whose Route 53 public hosted zone is known: where its certificate is validated. */
export interface ZonedDomain {
  readonly domainName: string;
  readonly zone: route53.IHostedZone;
}

/**
 * One ACM certificate for every custom name of the distribution (CloudFront serves one), the first
 * name as its subject and the others as alternative names, validated by DNS records in each name's
 * zone. ACM renews it through the same records. It must be made in us-east-1, CloudFront's region
 * for certificates: the caller's stack is either there or a certificate stack made for it (docs/domains.md).
 */
export function domainCertificate(scope: Construct, id: string, domains: readonly ZonedDomain[]): acm.Certificate {
  const [first, ...others] = domains;
  if (!first) throw new Error('a certificate needs at least one domain');
  return new acm.Certificate(scope, id, {
    domainName: first.domainName,
    subjectAlternativeNames: others.length > 0 ? others.map((domain) => domain.domainName) : undefined,
    validation: acm.CertificateValidation.fromDnsMultiZone(Object.fromEntries(domains.map((domain) => [domain.domainName, domain.zone]))),
  });
}

/** The hosted zone named by id and name, made once per id in `scope` (`zones` remembers them). */
export function hostedZoneOf(
  scope: Construct,
  zones: Map<string, route53.IHostedZone>,
  domain: { readonly hostedZoneId?: string; readonly hostedZoneName?: string },
): route53.IHostedZone | undefined {
  const { hostedZoneId, hostedZoneName } = domain;
  if (hostedZoneId === undefined || hostedZoneName === undefined) return undefined;
  const known = zones.get(hostedZoneId);
  if (known) return known;
  const zone = route53.HostedZone.fromHostedZoneAttributes(scope, `Zone${hostedZoneId}`, { hostedZoneId, zoneName: hostedZoneName });
  zones.set(hostedZoneId, zone);
  return zone;
}
