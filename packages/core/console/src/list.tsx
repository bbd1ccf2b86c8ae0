// The controls every list page shares (SPEC-3 §6: search, paging, the state in the URL): the search form, the
// page-size choice and the pager. Each page keeps its own state in its URL and passes what changed to `go`.
import { useEffect, useRef, type FormEvent, type ReactNode } from 'react';
import { t } from './i18n.js';

/** `page` (from 1) and `pageSize` (one of `sizes`, else `fallback`) of the URL's query. */
export function pagingOf(query: URLSearchParams, sizes: readonly number[], fallback: number) {
  const page = Math.max(1, Number(query.get('page')) || 1);
  const asked = Number(query.get('pageSize'));
  return { page, pageSize: sizes.includes(asked) ? asked : fallback };
}

/** A page size other than the default for the URL; the default stays out of it. */
const sizeInUrl = (pageSize: number, fallback: number) => (pageSize === fallback ? undefined : pageSize);

/** `page` and `pageSize` as a list's URL holds them: the first page and the default size stay out of it. */
export const pagingInUrl = (page: number, pageSize: number, fallback: number) => ({
  page: page === 1 ? undefined : page,
  pageSize: sizeInUrl(pageSize, fallback),
});

/** The page-size choice; a change goes back to the first page. */
export function PageSize(props: { sizes: readonly number[]; value: number; onChange(size: number): void }) {
  return (
    <label>
      {t('pageSize')}
      <select value={props.value} onChange={(event) => props.onChange(Number(event.target.value))}>
        {props.sizes.map((size) => (
          <option key={size} value={size}>
            {size}
          </option>
        ))}
      </select>
    </label>
  );
}

/**
 * The search form of a list: one `search` field and "Apply" (Enter submits), then `children` (a page-size
 * choice). The field follows the URL's search (going back in the history shows its text again) without being
 * made anew, so the focus stays where the keyboard left it after a search.
 */
export function SearchForm(props: {
  search: string;
  onSearch(text: string): void;
  labelledBy?: string;
  children?: ReactNode;
}) {
  const field = useRef<HTMLInputElement>(null);
  useEffect(() => {
    if (field.current && field.current.value.trim() !== props.search) field.current.value = props.search;
  }, [props.search]);
  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    props.onSearch(String(new FormData(event.currentTarget).get('search') ?? '').trim());
  };
  return (
    <form
      className="toolbar"
      role="search"
      onSubmit={submit}
      {...(props.labelledBy ? { 'aria-labelledby': props.labelledBy } : {})}
    >
      <label>
        {t('search')}
        <input ref={field} name="search" type="search" defaultValue={props.search} />
      </label>
      <button type="submit">{t('apply')}</button>
      {props.children}
    </form>
  );
}

/** Previous, "page N of M (total)", next. */
export function Pager(props: { page: number; pages: number; total: number; go(page: number): void }) {
  return (
    <div className="pager">
      <button type="button" disabled={props.page <= 1} onClick={() => props.go(props.page - 1)}>
        {t('previous')}
      </button>
      <span>{t('pageOf', { page: props.page, pages: Math.max(props.pages, 1), total: props.total })}</span>
      <button type="button" disabled={props.page >= props.pages} onClick={() => props.go(props.page + 1)}>
        {t('next')}
      </button>
    </div>
  );
}
