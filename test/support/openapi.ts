import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import { parse } from 'yaml';

/**
 * docs/openapi.yaml as the tests read it: its operations with the manifest route that serves
 * each, their responses with the error codes each lists, and JSON Schema validation of any value
 * against any schema of the document (Ajv, draft 2020-12, the dialect of OpenAPI 3.1).
 */
export const OPENAPI_FILE = join(__dirname, '..', '..', 'docs', 'openapi.yaml');

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;
/** The document's id inside Ajv: schemas are addressed as `${DOC_ID}#<JSON pointer>`. */
const DOC_ID = 'https://attribution-service.invalid/openapi.json';

type Node = Record<string, any>;

export interface Operation {
  /** "POST /event" */
  readonly key: string;
  readonly method: string;
  readonly path: string;
  /** The route key of lib/manifest.ts that serves it: `x-route`, else "<METHOD> <path>". */
  readonly route: string;
  /** False for `x-implemented: false`: documented ahead of the code. */
  readonly implemented: boolean;
  readonly pointer: string;
  readonly spec: Node;
}

export interface DocumentedResponse {
  readonly status: string;
  /** Where the response object is, after following its $ref. */
  readonly pointer: string;
  readonly spec: Node;
  readonly implemented: boolean;
  /** The codes its JSON body's `error` may take. */
  readonly codes: readonly string[];
}

export const pointerOf = (...parts: string[]) => parts.map((part) => `/${part.replace(/~/g, '~0').replace(/\//g, '~1')}`).join('');

export class OpenApi {
  readonly doc: Node;
  private readonly ajv: Ajv2020;
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(text = readFileSync(OPENAPI_FILE, 'utf8')) {
    this.doc = parse(text) as Node;
    // Not strict: OpenAPI adds keywords of its own (example, x-*) to the schemas.
    this.ajv = new Ajv2020({ strict: false, allErrors: true });
    // The formats the document uses, defined here rather than with ajv-formats: three one-liners.
    this.ajv.addFormat('int64', { type: 'number', validate: (n: number) => Number.isSafeInteger(n) });
    this.ajv.addFormat('date', { type: 'string', validate: (s: string) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)) });
    this.ajv.addFormat('uri', { type: 'string', validate: (s: string) => URL.canParse(s) });
    this.ajv.addSchema(this.doc, DOC_ID);
  }

  static readonly knownFormats = ['int64', 'date', 'uri'];

  /** The node at a JSON pointer, or undefined. */
  at(pointer: string): any {
    let node: any = this.doc;
    for (const part of pointer.split('/').slice(1)) {
      if (node === null || typeof node !== 'object') return undefined;
      node = node[part.replace(/~1/g, '/').replace(/~0/g, '~')];
    }
    return node;
  }

  /** Follows local $refs (OpenAPI's responses, parameters, headers) to the node and its pointer. */
  resolve(node: Node, pointer: string): { node: Node; pointer: string } {
    const seen = new Set<string>();
    while (typeof node?.$ref === 'string') {
      if (!node.$ref.startsWith('#/') || seen.has(node.$ref)) throw new Error(`unresolvable $ref ${node.$ref} at ${pointer}`);
      seen.add(node.$ref);
      pointer = node.$ref.slice(1);
      node = this.at(pointer);
      if (node === undefined) throw new Error(`$ref ${pointer} points at nothing`);
    }
    return { node, pointer };
  }

  /**
   * The operations under `paths`, then API Gateway's `$default` route as one more (key and route
   * "$default", any method and path), which the document describes in `x-default-route`.
   */
  operations(): Operation[] {
    const paths = Object.entries(this.doc.paths as Record<string, Node>).flatMap(([path, item]) =>
      METHODS.filter((method) => item[method]).map((method): Operation => {
        const spec = item[method] as Node;
        const key = `${method.toUpperCase()} ${path}`;
        return {
          key,
          method: method.toUpperCase(),
          path,
          route: (spec['x-route'] as string | undefined) ?? key,
          implemented: spec['x-implemented'] !== false,
          pointer: pointerOf('paths', path, method),
          spec,
        };
      }),
    );
    const fallback = this.doc['x-default-route'] as Node | undefined;
    if (!fallback) return paths;
    const defaultRoute: Operation = {
      key: '$default',
      method: '*',
      path: '*',
      route: '$default',
      implemented: true,
      pointer: pointerOf('x-default-route'),
      spec: fallback,
    };
    return [...paths, defaultRoute];
  }

  /** The operation a request reaches: a literal path before a templated one, as OpenAPI says; else the $default route. */
  operationFor(method: string, path: string): Operation | undefined {
    const all = this.operations();
    const candidates = all.filter((op) => op.method === method.toUpperCase());
    return (
      candidates.find((op) => op.path === path) ??
      candidates.find((op) => new RegExp(`^${op.path.replace(/\{[^}]+\}/g, '[^/]+')}$`).test(path)) ??
      all.find((op) => op.key === '$default')
    );
  }

  responses(operation: Operation): DocumentedResponse[] {
    return Object.entries(operation.spec.responses as Record<string, Node>).map(([status, raw]) =>
      this.response(raw, `${operation.pointer}${pointerOf('responses', status)}`, status),
    );
  }

  response(raw: Node, rawPointer: string, status: string): DocumentedResponse {
    const { node, pointer } = this.resolve(raw, rawPointer);
    return { status, pointer, spec: node, implemented: node['x-implemented'] !== false, codes: this.errorCodes(node, pointer) };
  }

  /** The error codes a response's JSON body lists: the enum or const of `error`, through $ref and allOf/anyOf/oneOf. */
  private errorCodes(response: Node, pointer: string): string[] {
    const schema = response.content?.['application/json']?.schema;
    if (!schema) return [];
    const codes = new Set<string>();
    const visit = (raw: Node, at: string) => {
      const { node, pointer: here } = this.resolve(raw, at);
      const error = node.properties?.error;
      if (error) {
        const { node: errorSchema } = this.resolve(error, `${here}/properties/error`);
        for (const code of errorSchema.enum ?? []) codes.add(code);
        if (errorSchema.const !== undefined) codes.add(errorSchema.const);
      }
      for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
        for (const [i, sub] of ((node[keyword] as Node[] | undefined) ?? []).entries()) visit(sub, `${here}/${keyword}/${i}`);
      }
    };
    visit(schema, `${pointer}${pointerOf('content', 'application/json', 'schema')}`);
    return [...codes];
  }

  /** Validates a value against the schema at a pointer; the problems, or [] when it holds. */
  validate(schemaPointer: string, value: unknown): string[] {
    let validator = this.validators.get(schemaPointer);
    if (!validator) {
      validator = this.ajv.getSchema(`${DOC_ID}#${schemaPointer}`);
      if (!validator) throw new Error(`no schema at ${schemaPointer}`);
      this.validators.set(schemaPointer, validator);
    }
    if (validator(value)) return [];
    return (validator.errors ?? []).map((error) => `${error.instancePath || '(root)'} ${error.message ?? 'is invalid'}`);
  }

  /** Every node of the document with its pointer (an alias is visited once per place it appears). */
  *walk(node: unknown = this.doc, pointer = ''): Generator<{ node: Node; pointer: string }> {
    if (node === null || typeof node !== 'object') return;
    yield { node: node as Node, pointer };
    for (const [key, child] of Object.entries(node)) yield* this.walk(child, `${pointer}${pointerOf(key)}`);
  }
}
