import fc from 'fast-check';
import { Sdk, type SdkConfig } from '../src';
import { CREDENTIALS, type Mode, World } from './world';

/**
 * The core's promise (docs/sdk.md): every event whose track() resolved reaches the service exactly
 * once, in the order tracked, through crashes between any two steps, lost answers, timeouts, 429s
 * with Retry-After, 503s and network failures; the queue stays within its bounds. The oracle is
 * the test's own: each track carries a sequence number in its params, and the in-memory service
 * (world.ts) stores each event_id once.
 */
const config = (overrides: Partial<SdkConfig> = {}): SdkConfig => ({
  ...CREDENTIALS,
  baseUrl: 'https://api.example.com/',
  batchSize: 5,
  flushIntervalMs: 30_000,
  backoff: { baseMs: 1_000, maxMs: 60_000 },
  ...overrides,
});

type Step =
  | { kind: 'track'; count: number }
  | { kind: 'advance'; ms: number }
  | { kind: 'crash' }
  | { kind: 'background' }
  | { kind: 'foreground' }
  | { kind: 'network'; modes: Mode[] };

const mode = fc.constantFrom<Mode>('ok', 'lost_answer', 'network_down', 'throttled', 'unavailable', 'hang');
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant('track' as const), count: fc.integer({ min: 1, max: 7 }) }) },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant('advance' as const), ms: fc.integer({ min: 0, max: 120_000 }) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('crash' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('background' as const) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('foreground' as const) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant('network' as const), modes: fc.array(mode, { minLength: 1, maxLength: 6 }) }) },
);

async function run(steps: readonly Step[]) {
  const world = new World();
  let sdk = await Sdk.start(config(), world.ports());
  let sequence = 0;
  const resolved: number[] = [];
  const pending = new Set<number>();
  for (const s of steps) {
    switch (s.kind) {
      case 'track':
        for (let i = 0; i < s.count; i++) {
          const n = sequence++;
          pending.add(n);
          const generation = world.generation;
          void sdk.track('level_up', { params: { n } }).then((id) => {
            // A track whose process died before it resolved promised nothing.
            if (id !== undefined && generation === world.generation) resolved.push(n);
          });
        }
        break;
      case 'advance':
        await world.advance(s.ms);
        break;
      case 'crash':
        // Dies at whatever point the queued work had reached; a new process starts from the disk.
        await world.settle();
        world.crash();
        sdk.stop();
        sdk = await Sdk.start(config(), world.ports());
        break;
      case 'background':
        void sdk.onBackground();
        break;
      case 'foreground':
        void sdk.onForeground();
        break;
      case 'network':
        world.modes.push(...s.modes);
        break;
    }
    await world.settle();
    expect(sdk.diagnostics().queued).toBeLessThanOrEqual(5_000);
  }
  // Then the network heals and time passes: everything that waits is sent.
  world.modes = [];
  for (let i = 0; i < 100 && sdk.diagnostics().queued > 0; i++) await world.advance(60_000);
  sdk.stop();
  return { world, resolved, sdk };
}

describe('the core, against crashes, lost answers and failures', () => {
  it('delivers every resolved track exactly once, in order, under one install id with one install event', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(step, { maxLength: 40 }), async (steps) => {
        const { world, resolved, sdk } = await run(steps);
        expect(sdk.diagnostics().queued).toBe(0);
        expect(world.badSignatures).toBe(0);
        const numbers = world.stored.filter((event) => event.event_name === 'level_up').map((event) => event.properties?.n as number);
        // Exactly once: no sequence number twice (a retry under a new id would be), every resolved one there.
        expect(new Set(numbers).size).toBe(numbers.length);
        for (const n of resolved) expect(numbers).toContain(n);
        // In order: the service stored them in the order they were tracked.
        expect(numbers).toEqual([...numbers].sort((a, b) => a - b));
        expect(new Set(world.stored.map((event) => event.install_uuid)).size).toBe(1);
        expect(world.stored.filter((event) => event.event_name === 'install')).toHaveLength(1);
      }),
      { numRuns: 60 },
    );
  }, 120_000);
});
