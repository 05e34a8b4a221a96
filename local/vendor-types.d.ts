// Minimal typings for the packages the local runtime uses that ship none: only what it uses.
declare module 'dynalite' {
  import type { Server } from 'node:http';

  interface DynaliteOptions {
    path?: string;
    createTableMs?: number;
    deleteTableMs?: number;
    updateTableMs?: number;
  }
  function dynalite(options?: DynaliteOptions): Server;
  export = dynalite;
}

declare module 's3rver' {
  import type { AddressInfo } from 'node:net';

  interface S3rverOptions {
    address?: string;
    port?: number;
    silent?: boolean;
    directory: string;
    configureBuckets?: { name: string }[];
  }
  class S3rver {
    constructor(options: S3rverOptions);
    /** Its winston logger (local/emulators.ts silences it). */
    logger: { silent: boolean };
    run(): Promise<AddressInfo>;
    close(): Promise<void>;
  }
  export = S3rver;
}

declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  /** A grant of scopes to a client for an account (the stand-in makes one in place of a consent screen). */
  class Grant {
    constructor(properties: { clientId: string; accountId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  /** The parts of Koa's context the stand-in's loadExistingGrant reads. */
  export interface GrantContext {
    oidc: {
      client: { clientId: string };
      session: { accountId: string; grantIdFor(clientId: string): string | undefined };
      result?: { consent?: { grantId?: string } };
      provider: { Grant: typeof Grant & { find(id: string): Promise<Grant | undefined> } };
    };
  }
  class Provider {
    constructor(
      issuer: string,
      configuration: Record<string, unknown> & { loadExistingGrant?(ctx: GrantContext): Promise<Grant | undefined> },
    );
    callback(): (request: IncomingMessage, response: ServerResponse) => void;
    interactionDetails(request: IncomingMessage, response: ServerResponse): Promise<{ uid: string }>;
    interactionFinished(
      request: IncomingMessage,
      response: ServerResponse,
      result: Record<string, unknown>,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<void>;
  }
  export default Provider;
}
