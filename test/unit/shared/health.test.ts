import { checkHealth, type Probe } from '../../../functions/domain/health/health';

const ok: Probe = async () => undefined;

describe('health checks', () => {
  it('is ok when every probe answers', async () => {
    const report = await checkHealth({ relational_store: ok, object_store: ok, key_value_store: ok, queues: ok }, 100);
    expect(report).toEqual({ status: 'ok', bindings: { relational_store: 'ok', object_store: 'ok', key_value_store: 'ok', queues: 'ok' } });
  });

  it('names a binding whose probe hangs as timeout, and aborts it', async () => {
    let aborted = false;
    const hang: Probe = (signal) =>
      new Promise((_resolve, reject) =>
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(new Error('aborted'));
        }),
      );
    const started = Date.now();
    const report = await checkHealth({ relational_store: ok, object_store: hang, key_value_store: ok, queues: ok }, 50);
    expect(Date.now() - started).toBeLessThan(1000);
    expect(report.status).toBe('failing');
    expect(report.bindings.object_store).toBe('timeout');
    expect(aborted).toBe(true);
  });

  it('names a refused connection as unreachable and never echoes the error message', async () => {
    const refused: Probe = async () => {
      throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:4566 secret-ish detail'), { code: 'ECONNREFUSED' });
    };
    const denied: Probe = async () => {
      throw Object.assign(new Error('User arn:aws:iam::123:role/x is not authorized'), { name: 'AccessDeniedException' });
    };
    const report = await checkHealth({ relational_store: ok, object_store: refused, key_value_store: denied, queues: ok }, 100);
    expect(report.bindings).toEqual({
      relational_store: 'ok',
      object_store: 'unreachable',
      key_value_store: 'error: AccessDeniedException',
      queues: 'ok',
    });
  });
});
