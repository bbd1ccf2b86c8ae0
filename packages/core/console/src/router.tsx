// A small client-side router: the console's views are paths below /admin/ with their list state (search, sort,
// page, filters) in the query, so a view can be shared and reloaded (the server answers every such path with
// the console's page, kernel/http/admin-console.ts).
import { useEffect, useState, type MouseEvent, type ReactNode } from 'react';

export const BASE = '/admin';

export interface Location {
  /** The path below /admin, e.g. `/users/42` (`/` for the start). */
  path: string;
  query: URLSearchParams;
}

function current(): Location {
  const path = location.pathname.startsWith(BASE) ? location.pathname.slice(BASE.length) || '/' : '/';
  return { path, query: new URLSearchParams(location.search) };
}

const listeners = new Set<() => void>();

/** Goes to `to` (a path below /admin with an optional query), adding a history entry unless `replace`. */
export function navigate(to: string, replace = false): void {
  const url = `${BASE}${to}`;
  if (replace) history.replaceState(null, '', url);
  else history.pushState(null, '', url);
  for (const listener of listeners) listener();
}

export function useLocation(): Location {
  const [value, setValue] = useState(current);
  useEffect(() => {
    const update = () => setValue(current());
    listeners.add(update);
    window.addEventListener('popstate', update);
    return () => {
      listeners.delete(update);
      window.removeEventListener('popstate', update);
    };
  }, []);
  return value;
}

/** `to` with `query`'s non-empty entries. */
export function withQuery(to: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query))
    if (value !== undefined && value !== '') params.set(key, String(value));
  const text = params.toString();
  return text ? `${to}?${text}` : to;
}

/** A real link (keyboard, middle click, copy address) that navigates in place on a plain click. */
export function Link(props: { to: string; children: ReactNode; current?: boolean; className?: string }) {
  const onClick = (event: MouseEvent<HTMLAnchorElement>) => {
    if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
    event.preventDefault();
    navigate(props.to);
  };
  return (
    <a
      href={`${BASE}${props.to}`}
      onClick={onClick}
      className={props.className}
      aria-current={props.current ? 'page' : undefined}
    >
      {props.children}
    </a>
  );
}
