import { app, must } from './client';
import type { Body, Ok } from './types';

/** Service levels (docs/slo.md) through the dashboard mirror of the family V routes. */
export type GroupSlo = Ok<'/v1/copier-groups/{group_id}/slo', 'get'>;
export type SloReport = Ok<'/v1/accounts/{account_id}/slo-report', 'get'>;
type SloBody = Body<'/v1/copier-groups/{group_id}/slo', 'put'>;

export const getGroupSlo = (groupId: string) =>
  must(app.GET('/v1/copier-groups/{group_id}/slo', { params: { path: { group_id: groupId } } }));

/** The body is sent as typed (see lib/slo.ts targetBody): a field that is not a number gets the server's 400. */
export const setGroupSlo = (groupId: string, body: Record<string, unknown>) =>
  must(app.PUT('/v1/copier-groups/{group_id}/slo', { params: { path: { group_id: groupId } }, body: body as SloBody }));

export const getSloReport = (accountId: string, month: string) =>
  must(
    app.GET('/v1/accounts/{account_id}/slo-report', { params: { path: { account_id: accountId }, query: { month } } }),
  );
