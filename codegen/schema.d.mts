// Types for schema.mjs, so the TypeScript tests can derive values from the same model.
export type Range = [number, number] | null;
export type FieldType =
  | { kind: 'prim'; prim: string }
  | { kind: 'array'; elem: FieldType }
  | { kind: 'struct'; struct: StructModel };
export interface FieldModel {
  name: string;
  prop: string;
  versions: Range;
  regular: Range;
  tagged: Range;
  tag: number | null;
  nullable: Range;
  ignorable: boolean;
  flexible: Range | undefined;
  default: unknown;
  type: FieldType;
}
export interface StructModel {
  schemaName: string;
  tsName: string;
  fields: FieldModel[];
}
export interface MessageModel {
  name: string;
  kind: string;
  apiKey: number | null;
  min: number;
  max: number;
  flexibleFrom: number;
  listeners: string[];
  latestVersionUnstable: boolean;
  structs: StructModel[];
  top: StructModel;
}
export type DefaultValue =
  | { kind: 'number'; value: number }
  | { kind: 'bigint'; value: bigint }
  | { kind: 'bool'; value: boolean }
  | { kind: 'string' | 'uuid'; value: string }
  | { kind: 'null' | 'emptyBytes' | 'emptyArray' }
  | { kind: 'struct'; struct: StructModel };
export const PRIMITIVES: Set<string>;
export function parseVersions(s: unknown): Range;
export function intersect(a: Range, b: Range): Range;
export function inRange(range: Range, v: number): boolean;
export function camel(name: string): string;
export function kebab(name: string): string;
export function loadSpecs(dir: string): Array<Record<string, unknown>>;
export function buildModel(spec: Record<string, unknown>): MessageModel;
export function typeNullable(field: FieldModel): boolean;
export function defaultOf(field: FieldModel): DefaultValue;
