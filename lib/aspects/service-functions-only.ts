import { Annotations, type IAspect } from 'aws-cdk-lib';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import type { IConstruct } from 'constructs';
import { ServiceFunction } from '../constructs/service-function';

/**
 * Fails synth on any NodejsFunction that is not a ServiceFunction. A bare one would silently miss
 * the service's defaults (arm64, Node 22, source maps, log retention, Powertools settings, least
 * privilege role), and nothing else would notice.
 */
export class ServiceFunctionsOnly implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof NodejsFunction && !(node instanceof ServiceFunction)) {
      Annotations.of(node).addError(
        `${node.node.path} is a bare NodejsFunction; use ServiceFunction (lib/constructs/service-function.ts), ` +
          'or better, add the function to lib/manifest.ts.',
      );
    }
  }
}
