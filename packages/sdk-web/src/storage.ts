import type { StoragePort } from '@attribution/sdk-core';
import { createStore, del, delMany, entries, get, set } from 'idb-keyval';

/**
 * Where the web SDK keeps things: the core's state (one key, written whole) and the outbox, where
 * a tab that does not send writes what it tracks (one key per event, so two tabs never write the
 * same key). IndexedDB through idb-keyval; localStorage where IndexedDB is missing or refuses to
 * open (some private modes), which is synchronous and so as durable once a call returns.
 */
export interface WebStore {
  readonly kind: 'indexeddb' | 'localstorage';
  readonly state: StoragePort;
  readonly outbox: {
    put(key: string, value: string): Promise<void>;
    /** Every entry, by key (keys start with the time tracked, so this is tracking order). */
    all(): Promise<[string, string][]>;
    remove(keys: readonly string[]): Promise<void>;
  };
}

export async function openStore(prefix = 'attribution'): Promise<WebStore> {
  try {
    if (typeof indexedDB === 'undefined') throw new Error('no IndexedDB');
    const state = createStore(`${prefix}-state`, 'kv');
    const outbox = createStore(`${prefix}-outbox`, 'kv');
    await get('probe', state);
    return {
      kind: 'indexeddb',
      state: { get: (key) => get<string>(key, state), set: (key, value) => set(key, value, state), remove: (key) => del(key, state) },
      outbox: {
        put: (key, value) => set(key, value, outbox),
        all: async () => (await entries<string, string>(outbox)).sort(([a], [b]) => (a < b ? -1 : 1)),
        remove: (keys) => delMany([...keys], outbox),
      },
    };
  } catch {
    return localStore(prefix);
  }
}

function localStore(prefix: string): WebStore {
  const box = `${prefix}.outbox.`;
  return {
    kind: 'localstorage',
    state: {
      get: async (key) => localStorage.getItem(`${prefix}.${key}`) ?? undefined,
      set: async (key, value) => localStorage.setItem(`${prefix}.${key}`, value),
      remove: async (key) => localStorage.removeItem(`${prefix}.${key}`),
    },
    outbox: {
      put: async (key, value) => localStorage.setItem(box + key, value),
      all: async () =>
        Object.keys(localStorage)
          .filter((key) => key.startsWith(box))
          .sort()
          .map((key): [string, string] => [key.slice(box.length), localStorage.getItem(key) ?? '']),
      remove: async (keys) => {
        for (const key of keys) localStorage.removeItem(box + key);
      },
    },
  };
}
