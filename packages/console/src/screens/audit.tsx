import type { AuditEntry } from '@eventrelay/config';
import type { Api } from '../api';
import { Pager, usePages } from '../components/pager';
import { ErrorNote, when } from '../components/ui';
import { useLoad } from '../hooks';
import { pageQuery } from '../lib/filters';

const PAGE = 50;

export function AuditLog({ api }: { api: Api }) {
  const pages = usePages();
  const cursor = pages.cursor;
  const page = useLoad(
    () => api.get<{ items: AuditEntry[]; nextCursor: string | null }>(`/audit?${pageQuery({}, { limit: PAGE, cursor })}`),
    cursor ?? '',
  );
  return (
    <>
      <h1>Audit log</h1>
      <ErrorNote error={page.error} />
      {/* Focusable: the details make it wider than the screen, and a keyboard must be able to scroll it. */}
      <table tabIndex={0}>
        <caption class="sr-only">Audit entries, newest first</caption>
        <thead>
          <tr>
            <th scope="col">When</th>
            <th scope="col">Action</th>
            <th scope="col">Target</th>
            <th scope="col">Token</th>
            <th scope="col">Details</th>
          </tr>
        </thead>
        <tbody>
          {page.data?.items.map((e, i) => (
            <tr key={`${e.at}-${i}`}>
              <td>{when(e.at)}</td>
              <td>{e.action}</td>
              <td>
                <code>{e.targetId}</code>
              </td>
              <td>
                <code>{e.tokenId}</code>
              </td>
              <td>
                <code class="details">{e.details ? JSON.stringify(e.details) : ''}</code>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      <Pager pages={pages} nextCursor={page.data?.nextCursor} />
    </>
  );
}
