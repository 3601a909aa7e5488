import { describe, expect, test } from '@jest/globals';
import { eveToolName, flueToolName, mapEveToFlue, mapFlueToEve, ToolNameCollisionError, ToolNameMap } from '@eve-flue/connections';

describe('tool naming', () => {
  test.each([
    ['demo', 'get-weather', 'mcp__demo__get-weather', 'connection__demo__get-weather'],
    ['my.server v2', 'get.weather', 'mcp__my_server_v2__get_weather', 'connection__my_server_v2__get_weather'],
    ['my.server v2', 'Ünï côde', 'mcp__my_server_v2__n__c_de', 'connection__my_server_v2__n__c_de'],
    ['my.server v2', '__private__', 'mcp__my_server_v2__private', 'connection__my_server_v2__private'],
    ['my.server v2', '***', 'mcp__my_server_v2__unnamed', 'connection__my_server_v2__unnamed'],
    ['a__b', 'c', 'mcp__a__b__c', 'connection__a__b__c'],
  ])('%s / %s → %s, %s (Flue’s observed names)', (server, tool, flue, eve) => {
    expect(flueToolName(server, tool)).toBe(flue);
    expect(eveToolName(server, tool)).toBe(eve);
  });

  test('maps forward both ways over declared names, and leaves other tools alone', () => {
    const map = new ToolNameMap([{ server: 'a__b', tools: ['c'] }, { server: 'a', tools: ['b__d'] }]);
    expect(mapFlueToEve(map, 'mcp__a__b__c')).toBe('connection__a__b__c');
    expect(mapEveToFlue(map, 'connection__a__b__d')).toBe('mcp__a__b__d');
    expect(map.origin('mcp__a__b__d')).toEqual({ server: 'a', tool: 'b__d', flueName: 'mcp__a__b__d', eveName: 'connection__a__b__d' });
    expect(mapFlueToEve(map, 'task')).toBe('task');
  });

  test('a collision names both sides', () => {
    expect(() => new ToolNameMap([{ server: 'my.server', tools: ['echo'] }, { server: 'my_server', tools: ['echo'] }])).toThrow(
      new ToolNameCollisionError(
        { server: 'my.server', tool: 'echo', flueName: 'mcp__my_server__echo', eveName: 'connection__my_server__echo' },
        { server: 'my_server', tool: 'echo', flueName: 'mcp__my_server__echo', eveName: 'connection__my_server__echo' },
      ),
    );
    expect(() => new ToolNameMap([{ server: 'x', tools: ['a.b', 'a_b'] }])).toThrow(/"a.b" from connection "x" and "a_b" from connection "x"/);
  });

  test('an agent tool that takes a connection tool’s name is a collision', () => {
    expect(() => new ToolNameMap([{ server: 'demo', tools: ['echo'] }], ['connection__demo__echo'])).toThrow(ToolNameCollisionError);
  });

  test('an mcp__ name the map has not seen still reaches Eve under its Eve name', () => {
    const map = new ToolNameMap([{ server: 'demo', tools: ['echo'] }]);
    expect(map.toEve('mcp__later__get-sum')).toBe(eveToolName('later', 'get-sum'));
    expect(map.toEve('task')).toBe('task');
  });
});
