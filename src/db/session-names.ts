/** An instance's kinds of database session, as pg_stat_activity names them (src/app/session-plan.ts counts them). */
export type SessionRole = 'listener' | 'listen check' | 'migrate' | 'requests' | 'purge' | 'fair-share' | 'webhook-queue';

/** `application_name` of one kind of session of one instance: `community-layer requests 1a2b3c4d`. */
export function sessionName(role: SessionRole, instanceId: string): string {
  return `community-layer ${role} ${instanceId}`;
}
