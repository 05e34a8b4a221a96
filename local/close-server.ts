import type { Server } from 'node:http';

/**
 * Closes a server without cutting a response short and without waiting out its keep-alive.
 *
 * `server.close()` ends the connections idle at that moment, but one answering a request then
 * stays open after its response, kept alive, and close() waits for it until `keepAliveTimeout`
 * (120 s on the DynamoDB emulator). Cutting every connection instead closes the store under a
 * query still being answered. So each connection is ended as soon as it is idle: its in-flight
 * request answered, then closed.
 */
export function closeServer(server: Server, pollMs = 20): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setInterval(() => server.closeIdleConnections(), pollMs);
    server.close(() => {
      clearInterval(timer);
      resolve();
    });
  });
}
