import { envName } from '../../lib/manifest';
import { LOCAL_ORIGIN_SECRET_VARIABLE } from '../../local/origin-secret';
import { TEST_ORIGIN_SECRET, TEST_ORIGIN_SECRET_ARN } from './edge';

// Tests run on Node 20 while Lambda runs Node 22: the SDK's upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// Unit tests mock the AWS clients (aws-sdk-client-mock patches every instance); the SDK still wants a region.
process.env.AWS_REGION ??= 'us-east-1';
// Routed handlers answer 403 to a request without CloudFront's origin secret, which they read from
// Secrets Manager by this ARN; unit tests that call one directly serve it with mockOriginSecret()
// (test/support/origin-secret.ts) and send it with fromCloudFront() (test/support/edge.ts).
process.env[envName.originVerifySecretArn()] ??= TEST_ORIGIN_SECRET_ARN;
process.env[LOCAL_ORIGIN_SECRET_VARIABLE] ??= TEST_ORIGIN_SECRET;
