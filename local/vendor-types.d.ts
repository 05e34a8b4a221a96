// Minimal typings for the two emulators, which ship none: only what the local runtime uses.
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
