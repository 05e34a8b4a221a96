import * as fs from 'node:fs';
import * as path from 'node:path';
import { App, type CfnElement, type Stack, Validations } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { createApp } from '../../bin/app';
import { AttributionServiceStack, type AttributionServiceStackProps } from '../../lib/stack';

const ROOT = path.resolve(__dirname, '..', '..');

/** The feature flags and settings the CLI uses, so tests synthesize what `cdk synth` does. */
export function cdkJsonContext(): Record<string, unknown> {
  return JSON.parse(fs.readFileSync(path.join(ROOT, 'cdk.json'), 'utf8')).context;
}

/**
 * The app exactly as bin/app.ts builds it (cdk-nag on), without esbuild: stack tests assert on
 * the template, not on bundles, and bundling every function would take most of the run. Extra
 * context (`env`, `configDir`) on top of cdk.json's; config/dev.json by default.
 */
export function serviceApp(context: Record<string, unknown> = {}): ReturnType<typeof createApp> {
  return createApp({ context: { ...unbundledContext(), ...context } });
}

function unbundledContext(): Record<string, unknown> {
  return { ...cdkJsonContext(), 'aws:cdk:bundling-stacks': [] };
}

export interface PolicyViolation {
  readonly ruleName: string;
  readonly severity?: string;
  readonly violatingResources?: readonly { readonly constructPath?: string }[];
}
export interface ValidationReport {
  readonly pluginReports: readonly { readonly pluginName?: string; readonly violations?: readonly PolicyViolation[] }[];
}

export interface SynthesizedService {
  readonly stack: AttributionServiceStack;
  readonly template: Template;
  readonly validationReport: ValidationReport;
}

export function synthesizeService(): SynthesizedService {
  return synthesized(serviceApp());
}

/**
 * The stack with deployment options bin/app.ts does not pass (domains, deletion protection), as a
 * deployer's app would build it, with cdk-nag's AWS Solutions checks as bin/app.ts adds them.
 */
export function synthesizeServiceWith(props: AttributionServiceStackProps): SynthesizedService {
  const app = new App({ context: unbundledContext() });
  const stack = new AttributionServiceStack(app, 'AttributionService', props);
  Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true, writeSuppressionsToCloudFormation: true }));
  return synthesized({ app, stack });
}

/** The stack alone, without cdk-nag: for options whose template is all a test looks at. */
export function serviceTemplateWith(props: AttributionServiceStackProps): Template {
  return Template.fromStack(new AttributionServiceStack(new App({ context: unbundledContext() }), 'AttributionService', props));
}

function synthesized({ app, stack }: { app: App; stack: AttributionServiceStack }): SynthesizedService {
  // Throws when any validation plugin (cdk-nag among them) reports an error.
  const assembly = app.synth();
  const validationReport = JSON.parse(fs.readFileSync(path.join(assembly.directory, 'validation-report.json'), 'utf8'));
  return { stack, template: Template.fromStack(stack), validationReport };
}

/** The logical id of a construct's CloudFormation resource, as the template names it. */
export function logicalId(construct: IConstruct): string {
  const resource = construct.node.defaultChild as CfnElement;
  return (resource.stack as Stack).getLogicalId(resource);
}
