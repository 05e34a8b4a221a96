/**
 * The independent oracle of the report rows now lives in sim/oracle.ts, where the traffic
 * simulator's --check uses it too; the property tests keep importing it from here.
 */
export { dropZeros, type OracleAttribution, type OracleEvent, type OracleRows, oracleRows } from '../../sim/oracle';
