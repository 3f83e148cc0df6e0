import { useState } from 'preact/hooks';

/** Where a cursor-paged list is: the cursors that led to the page shown (none on the first page). */
export interface Pages {
  readonly cursor: string | undefined;
  readonly cursors: readonly string[];
  readonly set: (cursors: string[]) => void;
}

export function usePages(): Pages {
  const [cursors, set] = useState<string[]>([]);
  return { cursor: cursors[cursors.length - 1], cursors, set };
}

/** Newer and Older buttons: back to the previous page, on to the one `nextCursor` names. */
export function Pager({ pages, nextCursor }: { pages: Pages; nextCursor: string | null | undefined }) {
  return (
    <div class="toolbar">
      {pages.cursors.length > 0 && (
        <button type="button" class="secondary" onClick={() => pages.set(pages.cursors.slice(0, -1))}>
          Newer
        </button>
      )}
      {nextCursor && (
        <button type="button" class="secondary" onClick={() => pages.set([...pages.cursors, nextCursor])}>
          Older
        </button>
      )}
    </div>
  );
}
