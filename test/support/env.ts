import { envName } from '../../lib/manifest';
import { TEST_ORIGIN_SECRET } from './edge';

// Tests run on Node 20 while Lambda runs Node 22: the SDK's upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// Unit tests mock the AWS clients (aws-sdk-client-mock patches every instance); the SDK still wants a region.
process.env.AWS_REGION ??= 'us-east-1';
// Routed handlers answer 403 to a request without CloudFront's origin secret; tests that call one
// directly send it with fromCloudFront() (test/support/edge.ts).
process.env[envName.originVerifySecret()] ??= TEST_ORIGIN_SECRET;
