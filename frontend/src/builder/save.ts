import { api, enc, type Schemas } from '../api/client';
import { channelDocument, type Conversion } from './convert';

export type Channel = Schemas['Channel'];

/**
 * saveChannel writes a converted graph with one PUT /buses/{bus}/channels/{rule} of the channel API: the bus
 * (created when it does not exist), the sources that are new or changed, the rule and all its targets (those no
 * longer in the graph are deleted). The server checks all of it first and stores all of it or nothing; it answers
 * the channel as stored. It throws ApiError: 400 InvalidChannel with every problem at its place in the document
 * (serverProblems.ts puts them on the nodes), 409 ChannelChanged when another request changed the channel
 * meanwhile, and the API's other problems.
 */
export function saveChannel(c: Conversion): Promise<Channel> {
  return api<Channel>(`/buses/${enc(c.bus)}/channels/${enc(c.rule.name ?? '')}`, { method: 'PUT', body: channelDocument(c) });
}
