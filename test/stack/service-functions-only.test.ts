import * as path from 'node:path';
import { App, Aspects, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { Runtime } from 'aws-cdk-lib/aws-lambda';
import { NodejsFunction } from 'aws-cdk-lib/aws-lambda-nodejs';
import { ServiceFunctionsOnly } from '../../lib/aspects/service-functions-only';
import { ServiceFunction } from '../../lib/constructs/service-function';
import { serviceApp } from './synthesize';

const entry = path.resolve(__dirname, '..', '..', 'functions', 'health.ts');

function stackWithAspect(): Stack {
  const app = new App({ context: { 'aws:cdk:bundling-stacks': [] } });
  const stack = new Stack(app, 'Probe');
  Aspects.of(stack).add(new ServiceFunctionsOnly());
  return stack;
}

describe('ServiceFunctionsOnly', () => {
  it('reports an error on a NodejsFunction that is not a ServiceFunction', () => {
    const stack = stackWithAspect();
    new NodejsFunction(stack, 'Bare', { entry, runtime: Runtime.NODEJS_22_X });
    Annotations.fromStack(stack).hasError('/Probe/Bare', Match.stringLikeRegexp('bare NodejsFunction; use ServiceFunction'));
  });

  it('lets a ServiceFunction through', () => {
    const stack = stackWithAspect();
    new ServiceFunction(stack, 'Service', { entry });
    expect(Annotations.fromStack(stack).findError('*', Match.anyValue())).toEqual([]);
  });

  it('fails synth of the service app when a bare NodejsFunction is added to it', () => {
    const { app, stack } = serviceApp();
    new NodejsFunction(stack, 'BareFunction', { entry, runtime: Runtime.NODEJS_22_X });
    expect(() => app.synth()).toThrow(/BareFunction is a bare NodejsFunction; use ServiceFunction/);
  });
});
