/**
 * The share coordinator's RPCs as a client sends them (KIP-932): InitializeShareGroupState (83),
 * ReadShareGroupState (84), WriteShareGroupState (85), DeleteShareGroupState (86) and
 * ReadShareGroupStateSummary (87), each a pair of the generated request encoder and response
 * decoder with the versions spoken. A share-partition leader sends them to the share coordinator
 * of another node (share-state-client.ts).
 */
import type { ApiSpec } from '../client/apis.js';
import { ApiKey } from '../protocol/generated/api-table.js';
import { encodeDeleteShareGroupStateRequest, type DeleteShareGroupStateRequestInput } from '../protocol/generated/messages/delete-share-group-state-request.js';
import { decodeDeleteShareGroupStateResponse, type DeleteShareGroupStateResponse } from '../protocol/generated/messages/delete-share-group-state-response.js';
import { encodeInitializeShareGroupStateRequest, type InitializeShareGroupStateRequestInput } from '../protocol/generated/messages/initialize-share-group-state-request.js';
import { decodeInitializeShareGroupStateResponse, type InitializeShareGroupStateResponse } from '../protocol/generated/messages/initialize-share-group-state-response.js';
import { encodeReadShareGroupStateRequest, type ReadShareGroupStateRequestInput } from '../protocol/generated/messages/read-share-group-state-request.js';
import { decodeReadShareGroupStateResponse, type ReadShareGroupStateResponse } from '../protocol/generated/messages/read-share-group-state-response.js';
import { encodeReadShareGroupStateSummaryRequest, type ReadShareGroupStateSummaryRequestInput } from '../protocol/generated/messages/read-share-group-state-summary-request.js';
import { decodeReadShareGroupStateSummaryResponse, type ReadShareGroupStateSummaryResponse } from '../protocol/generated/messages/read-share-group-state-summary-response.js';
import { encodeWriteShareGroupStateRequest, type WriteShareGroupStateRequestInput } from '../protocol/generated/messages/write-share-group-state-request.js';
import { decodeWriteShareGroupStateResponse, type WriteShareGroupStateResponse } from '../protocol/generated/messages/write-share-group-state-response.js';

export const ShareStateApis = {
  InitializeShareGroupState: {
    apiKey: ApiKey.InitializeShareGroupState,
    versions: [0, 0],
    encode: encodeInitializeShareGroupStateRequest,
    decode: decodeInitializeShareGroupStateResponse,
  } as ApiSpec<InitializeShareGroupStateRequestInput, InitializeShareGroupStateResponse>,
  ReadShareGroupState: {
    apiKey: ApiKey.ReadShareGroupState,
    versions: [0, 0],
    encode: encodeReadShareGroupStateRequest,
    decode: decodeReadShareGroupStateResponse,
  } as ApiSpec<ReadShareGroupStateRequestInput, ReadShareGroupStateResponse>,
  WriteShareGroupState: {
    apiKey: ApiKey.WriteShareGroupState,
    versions: [0, 1],
    encode: encodeWriteShareGroupStateRequest,
    decode: decodeWriteShareGroupStateResponse,
  } as ApiSpec<WriteShareGroupStateRequestInput, WriteShareGroupStateResponse>,
  DeleteShareGroupState: {
    apiKey: ApiKey.DeleteShareGroupState,
    versions: [0, 0],
    encode: encodeDeleteShareGroupStateRequest,
    decode: decodeDeleteShareGroupStateResponse,
  } as ApiSpec<DeleteShareGroupStateRequestInput, DeleteShareGroupStateResponse>,
  ReadShareGroupStateSummary: {
    apiKey: ApiKey.ReadShareGroupStateSummary,
    versions: [0, 1],
    encode: encodeReadShareGroupStateSummaryRequest,
    decode: decodeReadShareGroupStateSummaryResponse,
  } as ApiSpec<ReadShareGroupStateSummaryRequestInput, ReadShareGroupStateSummaryResponse>,
} as const;
