/**
 * One tab sends: the core writes its whole state at each change, so two tabs running it would
 * each overwrite the other's queue. The tab holding the lock leads (runs the core); the others
 * write what they track to the outbox, which the leader merges. With the Web Locks API the lock is
 * held until the tab closes or reloads, and the browser hands it to a waiting tab at once.
 * Without it (old browsers), a lease in localStorage renewed every second stands in: a tab whose
 * lease was taken (its timers slowed in the background) is told to stop leading.
 */
export interface Leadership {
  /** Gives up leading and stops asking (the SDK is stopped). */
  release(): void;
}

const LEASE_MS = 5_000;

export function lead(name: string, onLead: () => void, onLose: () => void): Leadership {
  const locks = typeof navigator !== 'undefined' ? navigator.locks : undefined;
  if (locks) {
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const aborted = new AbortController();
    void locks
      .request(name, { signal: aborted.signal }, async () => {
        onLead();
        await held;
      })
      .catch(() => undefined);
    return {
      release: () => {
        aborted.abort();
        release();
      },
    };
  }
  return leaseIn(name, onLead, onLose);
}

function leaseIn(name: string, onLead: () => void, onLose: () => void): Leadership {
  const me = Math.random().toString(36).slice(2);
  let leading = false;
  const beat = () => {
    const now = Date.now();
    const [holder, until] = (localStorage.getItem(name) ?? '').split(' ');
    if (holder === me || !until || Number(until) < now) {
      localStorage.setItem(name, `${me} ${now + LEASE_MS}`);
      if (!leading && localStorage.getItem(name)?.startsWith(`${me} `)) {
        leading = true;
        onLead();
      }
    } else if (leading) {
      leading = false;
      onLose();
    }
  };
  beat();
  const timer = setInterval(beat, 1_000);
  return {
    release: () => {
      clearInterval(timer);
      if (leading) localStorage.removeItem(name);
    },
  };
}
