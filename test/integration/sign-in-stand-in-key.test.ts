import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';

const root = join(__dirname, '../..');

describe("the sign-in stand-in's signing key", () => {
  it('is made again and again without the process hanging (the JWK export that deadlocked with a GC)', async () => {
    // In a process of its own, as the stand-in runs: exporting the JWK of generateKeyPairSync's key
    // object hung such a loop (a lock taken twice when a GC finalised the key-generation job
    // mid-export): within a few hundred to two thousand keys, and within about 250 with a 1 MiB
    // young generation, whose frequent collections make the moment come sooner. Small keys make a
    // thousand in a few seconds; keeping some alive gives the collector work while they are exported.
    const loop = `
      const { signingJwk } = require('./local/sign-in-stand-in.ts');
      let kept = [];
      for (let i = 0; i < 1000; i++) {
        const jwk = signingJwk(512);
        if (jwk.kty !== 'RSA' || typeof jwk.d !== 'string' || typeof jwk.n !== 'string') throw new Error('not an RSA private JWK');
        kept.push(jwk);
        if (kept.length > 50) kept = [];
      }
      process.stdout.write(JSON.stringify(signingJwk()));
    `;
    const { stdout } = await promisify(execFile)(process.execPath, ['--max-semi-space-size=1', '--import', 'tsx', '-e', loop], {
      cwd: root,
      timeout: 40_000,
    });
    const jwk = JSON.parse(stdout) as { kty: string; n: string; e: string; d: string };
    expect(jwk.kty).toBe('RSA');
    expect(jwk.e).toBe('AQAB');
    // 2048 bits by default, as the deployed pool's keys are.
    expect(Buffer.from(jwk.n, 'base64url').length).toBe(256);
    expect(jwk.d.length).toBeGreaterThan(300);
  }, 60_000);
});
