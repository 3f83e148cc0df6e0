/**
 * One bad field of some input, as both people and programs need it: the path of the field
 * (`settings.webhooks[0].url`) and what is wrong with it. Config files join them into one message;
 * the admin API returns them as a list.
 */
export interface FieldProblem {
  readonly field: string;
  readonly message: string;
}

export function describeProblem(problem: FieldProblem): string {
  return problem.field === '' ? problem.message : `${problem.field} ${problem.message}`;
}
