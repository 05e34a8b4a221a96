import { parseArgs } from 'node:util';
import { CloudFormationClient, DescribeStacksCommand } from '@aws-sdk/client-cloudformation';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { outputKey } from '../lib/manifest';
import { bundleConsole } from './bundle';
import { consolePage } from './page';

/**
 * `npm run console:publish -- --stack NAME` (docs/console.md, "The deployed console"): puts the
 * console's page, script and stylesheet in the stack's console bucket, the page naming the user
 * pool's issuer and app client that console/ui/sign-in.ts signs in with. Run after each deploy;
 * the page is never cached, the assets for five minutes, so a publish shows within that.
 */
export async function publishConsole(stackName: string): Promise<string> {
  const { Stacks } = await new CloudFormationClient({}).send(new DescribeStacksCommand({ StackName: stackName }));
  const outputs = Object.fromEntries((Stacks?.[0]?.Outputs ?? []).map((o) => [o.OutputKey, o.OutputValue]));
  const need = (key: string) => {
    const value = outputs[key];
    if (!value) throw new Error(`stack ${stackName} has no output ${key}: deploy this version of the stack first`);
    return value;
  };
  const bucket = need(outputKey.consoleBucket());
  const page = consolePage({
    'console-authority': need(outputKey.consoleIssuer()),
    'console-client-id': need(outputKey.consoleClientId()),
  });
  const bundle = await bundleConsole();
  const s3 = new S3Client({});
  const files = [
    ['index.html', page, 'text/html; charset=utf-8', 'no-cache'],
    ['assets/console.js', bundle.js, 'text/javascript; charset=utf-8', 'max-age=300'],
    ['assets/console.css', bundle.css, 'text/css; charset=utf-8', 'max-age=300'],
  ] as const;
  for (const [key, body, contentType, cacheControl] of files) {
    await s3.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body, ContentType: contentType, CacheControl: cacheControl }));
  }
  return need(outputKey.consoleUrl());
}

if (require.main === module) {
  const { values } = parseArgs({ options: { stack: { type: 'string' } }, strict: true });
  if (!values.stack) {
    process.stderr.write('usage: npm run console:publish -- --stack NAME\n');
    process.exit(2);
  }
  publishConsole(values.stack).then(
    (url) => process.stdout.write(`The console is published: ${url}\n`),
    (error: unknown) => {
      process.stderr.write(`error: ${(error as Error).message}\n`);
      process.exit(1);
    },
  );
}
