// Tests run on Node 20 while Lambda runs Node 22: the SDK's upgrade notice is noise here.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_METRICS_DISABLED ??= 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= 'SILENT';
// Unit tests mock the AWS clients (aws-sdk-client-mock patches every instance); the SDK still wants a region.
process.env.AWS_REGION ??= 'us-east-1';
