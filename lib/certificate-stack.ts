import { Stack, type StackProps } from 'aws-cdk-lib';
import type * as acm from 'aws-cdk-lib/aws-certificatemanager';
import type * as route53 from 'aws-cdk-lib/aws-route53';
import type { Construct } from 'constructs';
import { domainCertificate, hostedZoneOf } from './constructs/domain-certificate';
import type { CustomDomain } from './constructs/edge';

/** CloudFront's region for certificates (and web ACLs), whatever the distribution's stack's region. */
export const CLOUDFRONT_CERTIFICATE_REGION = 'us-east-1';

export interface CertificateStackProps extends StackProps {
  /** The distribution's custom domains, every one with its hosted zone. */
  readonly domains: readonly CustomDomain[];
}

/**
 * The certificate of the custom domains of a service stack deployed outside us-east-1, which
 * CloudFront cannot take a certificate from (docs/domains.md). bin/app.ts adds it when every
 * domain gives its hosted zone and none gives a certificateArn. The service stack reads the
 * certificate's ARN from this stack's output with `Fn::GetStackOutput` (CDK's weak cross-region
 * reference, cdk.json's `defaultCrossStackReferences`: no export lock, no custom resource), so its
 * region must be known at synth, and this stack deploys first (`cdk deploy --all`).
 */
export class CertificateStack extends Stack {
  readonly certificate: acm.Certificate;

  constructor(scope: Construct, id: string, props: CertificateStackProps) {
    const { domains, ...stackProps } = props;
    super(scope, id, {
      description: 'Attribution service: the us-east-1 certificate of its CloudFront custom domains (docs/domains.md).',
      ...stackProps,
      crossRegionReferences: true,
    });
    const zones = new Map<string, route53.IHostedZone>();
    this.certificate = domainCertificate(
      this,
      'Certificate',
      domains.map((domain) => {
        const zone = hostedZoneOf(this, zones, domain);
        if (!zone) throw new Error(`${domain.domainName}: the certificate stack validates in the hosted zone, which it does not give`);
        return { domainName: domain.domainName, zone };
      }),
    );
  }
}
