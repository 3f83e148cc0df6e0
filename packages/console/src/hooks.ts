import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { parseRoute, type Route } from './lib/routes';

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const update = () => setRoute(parseRoute(location.hash));
    window.addEventListener('hashchange', update);
    return () => window.removeEventListener('hashchange', update);
  }, []);
  return route;
}

export interface Loaded<T> {
  readonly data: T | undefined;
  readonly error: unknown;
  readonly loading: boolean;
  readonly reload: () => void;
}

/**
 * Loads `fn()` when `key` changes and, with `everyMs`, again on that period (the overview and the
 * debugger refresh themselves). A slow answer never overwrites a newer one.
 */
export function useLoad<T>(fn: () => Promise<T>, key: string, everyMs?: number): Loaded<T> {
  const [state, setState] = useState<{ data: T | undefined; error: unknown; loading: boolean }>({
    data: undefined,
    error: undefined,
    loading: true,
  });
  const generation = useRef(0);
  const fnRef = useRef(fn);
  fnRef.current = fn;
  const run = useCallback(() => {
    const mine = ++generation.current;
    setState((s) => ({ ...s, loading: true }));
    fnRef.current().then(
      (data) => mine === generation.current && setState({ data, error: undefined, loading: false }),
      (error: unknown) => mine === generation.current && setState((s) => ({ data: s.data, error, loading: false })),
    );
  }, []);
  useEffect(() => {
    setState({ data: undefined, error: undefined, loading: true });
    run();
    if (!everyMs) return () => void generation.current++;
    const timer = setInterval(run, everyMs);
    return () => {
      clearInterval(timer);
      generation.current++;
    };
  }, [key, everyMs, run]);
  return { ...state, reload: run };
}
