/** The hello a connection starts with (HelloMessage in shared-types protocol.ts), from the agent's context. */
import { type HelloMessage, PROTOCOL_VERSION } from '@blkheat/shared-types';
import { agentStatus, type AgentContext } from './context.js';

export function helloOf(ctx: AgentContext, now = Math.floor(Date.now() / 1000)): HelloMessage {
  return {
    t: 'hello',
    protocol: PROTOCOL_VERSION,
    agent: ctx.version,
    host: ctx.host,
    schema: ctx.schema,
    step: ctx.history.fineStep,
    disks: ctx.disks(),
    now,
    historyFrom: ctx.fleet ? ctx.fleet.historyFrom() : (ctx.history.oldestTs ?? now),
    tiers: ctx.history.tierSteps,
    status: agentStatus(ctx),
    ...(ctx.fleet ? { fleet: ctx.fleet.info() } : {}),
  };
}
